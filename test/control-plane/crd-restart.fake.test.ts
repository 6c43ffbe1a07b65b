import { describeCrdRestartContract } from "./cases/crd-restart.case.js";
import { FAKE_APISERVER } from "./fake-plane.js";

describeCrdRestartContract(FAKE_APISERVER);
