import { describeNamespacedContract } from "../control-plane/cases/namespaced.case.js";
import { KUBE_APISERVER } from "../control-plane/envtest-plane.js";

describeNamespacedContract(KUBE_APISERVER);
