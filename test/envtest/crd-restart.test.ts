import { describeCrdRestartContract } from "../control-plane/cases/crd-restart.case.js";
import { KUBE_APISERVER } from "../control-plane/envtest-plane.js";

describeCrdRestartContract(KUBE_APISERVER);
