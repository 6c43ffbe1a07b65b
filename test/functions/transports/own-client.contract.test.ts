import { ownClientDriver } from "./own-client-driver.js";
import { describeTransportContract } from "./transport.case.js";

describeTransportContract("the own HTTP/1.1 client (node/backend-pools.ts)", ownClientDriver);
