import { describeLeaderElectionContract } from "./cases/leader-election.case.js";
import { FAKE_APISERVER } from "./fake-plane.js";

describeLeaderElectionContract(FAKE_APISERVER);
