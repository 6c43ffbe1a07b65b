import { describeRbacContract } from "./cases/rbac.case.js";
import { FAKE_APISERVER } from "./fake-plane.js";

describeRbacContract(FAKE_APISERVER);
