import { describeIngressContract } from "../control-plane/cases/ingress.case.js";
import { KUBE_APISERVER } from "../control-plane/envtest-plane.js";

describeIngressContract(KUBE_APISERVER);
