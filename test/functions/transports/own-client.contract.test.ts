import { ownClientDriver } from "./own-client-driver.js";
import { describeTransportContract } from "./transport.case.js";

describeTransportContract("the own HTTP/1.1 client (node/http1-dispatcher.ts)", ownClientDriver);
