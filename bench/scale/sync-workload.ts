import type { FakeKube } from "../../test/fake-kube/server.js";
import { serviceName, serviceObject, sliceObject } from "../convergence/objects.js";
import type { ChangeMade } from "../support/paced-changes.js";
import { changedAddress, endpointAddress } from "./addresses.js";

/**
 * The sync's workload at scale (issue 26): Services of 20 endpoints in one slice, plus a few large Services
 * whose endpoints are spread over many slices, as the EndpointSlice controller splits a big Service.
 */
const SCALE_NAMESPACE = "scale";

export interface SyncWorkloadShape {
  /** Services of `endpointsPerSmall` endpoints in one slice each. */
  readonly smallServices: number;
  readonly endpointsPerSmall: number;
  /** Services of `endpointsPerLarge` endpoints spread evenly over `slicesPerLarge` slices. */
  readonly largeServices: number;
  readonly endpointsPerLarge: number;
  readonly slicesPerLarge: number;
}

export function workloadEndpoints(shape: SyncWorkloadShape): number {
  return shape.smallServices * shape.endpointsPerSmall + shape.largeServices * shape.endpointsPerLarge;
}

/**
 * The objects the fake API server holds for the sync, and the changes made to them: each replaces the first
 * endpoint of one slice with an address no earlier change used. Every twentieth change goes to a large
 * Service, so a change whose record carries a thousand endpoints is part of the churn.
 */
export interface SyncWorkload {
  readonly services: number;
  applyAll(kube: FakeKube): void;
  changeNext(kube: FakeKube): ChangeMade;
}

export function createSyncWorkload(shape: SyncWorkloadShape): SyncWorkload {
  const slices: string[][][] = [];
  let endpoint = 0;
  const take = (count: number) => Array.from({ length: count }, () => endpointAddress(endpoint++));
  for (let index = 0; index < shape.smallServices; index++) slices.push([take(shape.endpointsPerSmall)]);
  const perSlice = Math.ceil(shape.endpointsPerLarge / shape.slicesPerLarge);
  for (let large = 0; large < shape.largeServices; large++) {
    const lists: string[][] = [];
    for (let left = shape.endpointsPerLarge; left > 0; left -= perSlice)
      lists.push(take(Math.min(perSlice, left)));
    slices.push(lists);
  }
  let changes = 0;
  const pick = (change: number): [number, number] => {
    const round = Math.floor(change / 20);
    if (shape.largeServices > 0 && change % 20 === 19) {
      const large = round % shape.largeServices;
      const slice = Math.floor(round / shape.largeServices) % shape.slicesPerLarge;
      return [shape.smallServices + large, slice];
    }
    return [(change - round) % Math.max(1, shape.smallServices), 0];
  };
  return {
    services: slices.length,
    applyAll(kube) {
      slices.forEach((lists, index) => {
        kube.apply(serviceObject(index, SCALE_NAMESPACE));
        lists.forEach((addresses, slice) => {
          kube.apply(sliceObject(index, addresses, SCALE_NAMESPACE, slice));
        });
      });
    },
    changeNext(kube) {
      const change = changes++;
      const [index, slice] = pick(change);
      const list = slices[index]?.[slice];
      if (!list) throw new Error(`no slice ${slice} of Service ${index}`);
      const address = changedAddress(change);
      list[0] = address;
      kube.apply(sliceObject(index, list, SCALE_NAMESPACE, slice));
      return { service: `${SCALE_NAMESPACE}/${serviceName(index)}`, address };
    },
  };
}
