// The time source of what stamps API objects (heartbeats, leases, events, certificates): replaceable
// in tests, while timers stay real.

export interface Clock {
  now(): Date;
}

export const systemClock: Clock = { now: () => new Date() };
