import { describeGatewayApiContract } from "../control-plane/cases/gateway-api.case.js";
import { KUBE_APISERVER } from "../control-plane/envtest-plane.js";

describeGatewayApiContract(KUBE_APISERVER);
