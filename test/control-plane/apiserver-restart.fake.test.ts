import { describeApiserverRestartContract } from "./cases/apiserver-restart.case.js";
import { FAKE_APISERVER } from "./fake-plane.js";

describeApiserverRestartContract(FAKE_APISERVER);
