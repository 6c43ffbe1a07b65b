import { describeIngressContract } from "./cases/ingress.case.js";
import { FAKE_APISERVER } from "./fake-plane.js";

describeIngressContract(FAKE_APISERVER);
