import { describeManyServicesContract } from "../control-plane/cases/many-services.case.js";
import { KUBE_APISERVER } from "../control-plane/envtest-plane.js";

describeManyServicesContract(KUBE_APISERVER);
