import { describeManyServicesContract } from "./cases/many-services.case.js";
import { FAKE_APISERVER } from "./fake-plane.js";

describeManyServicesContract(FAKE_APISERVER);
