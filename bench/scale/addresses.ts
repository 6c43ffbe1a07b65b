/**
 * Every endpoint address of the scale bench is in 127.0.0.0/8: data for the store and the route table, never a
 * destination outside the machine. 127.0.0.1 is the bench's own probe backend; the store's endpoints start at
 * 127.1.0.0 (a running number spread over the last three octets) and changed addresses at 127.250.0.0, which
 * the initial numbering never reaches below 15 million endpoints.
 */
const STORE_BASE = 1 << 16;
const CHANGED_BASE = 250 << 16;

function loopback(number: number): string {
  return `127.${(number >> 16) & 255}.${(number >> 8) & 255}.${number & 255}`;
}

/** The address of endpoint number `endpoint` (0-based, unique across the whole bench store). */
export function endpointAddress(endpoint: number): string {
  return loopback(STORE_BASE + endpoint);
}

/** A fresh address for change number `change`, never one the initial store holds. */
export function changedAddress(change: number): string {
  return loopback(CHANGED_BASE + (change % CHANGED_BASE));
}
