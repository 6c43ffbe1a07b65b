import { describeControlPlaneOutageContract } from "../control-plane/cases/control-plane-outage.case.js";
import { KUBE_APISERVER } from "../control-plane/envtest-plane.js";

describeControlPlaneOutageContract(KUBE_APISERVER);
