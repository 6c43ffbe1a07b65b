import { describeHarnessContract } from "../control-plane/cases/harness.case.js";
import { KUBE_APISERVER } from "../control-plane/envtest-plane.js";

describeHarnessContract(KUBE_APISERVER);
