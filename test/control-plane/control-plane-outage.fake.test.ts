import { describeControlPlaneOutageContract } from "./cases/control-plane-outage.case.js";
import { FAKE_APISERVER } from "./fake-plane.js";

describeControlPlaneOutageContract(FAKE_APISERVER);
