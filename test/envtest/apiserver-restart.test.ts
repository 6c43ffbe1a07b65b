import { describeApiserverRestartContract } from "../control-plane/cases/apiserver-restart.case.js";
import { KUBE_APISERVER } from "../control-plane/envtest-plane.js";

describeApiserverRestartContract(KUBE_APISERVER);
