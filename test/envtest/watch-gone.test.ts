import { describeWatchGoneContract } from "../control-plane/cases/watch-gone.case.js";
import { KUBE_APISERVER } from "../control-plane/envtest-plane.js";

describeWatchGoneContract(KUBE_APISERVER);
