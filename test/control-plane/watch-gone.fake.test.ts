import { describeWatchGoneContract } from "./cases/watch-gone.case.js";
import { FAKE_APISERVER } from "./fake-plane.js";

describeWatchGoneContract(FAKE_APISERVER);
