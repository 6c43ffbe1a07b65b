import { describeLeaderElectionContract } from "../control-plane/cases/leader-election.case.js";
import { KUBE_APISERVER } from "../control-plane/envtest-plane.js";

describeLeaderElectionContract(KUBE_APISERVER);
