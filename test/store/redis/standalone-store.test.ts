import { redisTarget } from "../../../store/redis/target.js";
import { REDIS_URL } from "../../support/redis.js";
import { describeStoreContract } from "../store.case.js";
import { redisStoreDriver } from "./store-driver.js";

describeStoreContract("Redis (standalone)", () => redisStoreDriver(redisTarget(REDIS_URL, false)));
