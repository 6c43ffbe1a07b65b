import { describeGatewayApiContract } from "./cases/gateway-api.case.js";
import { FAKE_APISERVER } from "./fake-plane.js";

describeGatewayApiContract(FAKE_APISERVER);
