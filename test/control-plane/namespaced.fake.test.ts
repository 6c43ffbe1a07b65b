import { describeNamespacedContract } from "./cases/namespaced.case.js";
import { FAKE_APISERVER } from "./fake-plane.js";

describeNamespacedContract(FAKE_APISERVER);
