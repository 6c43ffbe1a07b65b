import { describeRbacContract } from "../control-plane/cases/rbac.case.js";
import { KUBE_APISERVER } from "../control-plane/envtest-plane.js";

describeRbacContract(KUBE_APISERVER);
