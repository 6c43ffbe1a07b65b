import { describeHarnessContract } from "./cases/harness.case.js";
import { FAKE_APISERVER } from "./fake-plane.js";

describeHarnessContract(FAKE_APISERVER);
