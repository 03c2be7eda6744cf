// A hand-driven connection gate for unit tests: up or down as the test says.
import type { ConnectionGate } from '../../../../src/apiserver/client/connectivity.js';

export class FakeGate implements ConnectionGate {
  usable = true;
  private readonly listeners: (() => void)[] = [];
  onUp(l: () => void): void {
    this.listeners.push(l);
  }
  down(): void {
    this.usable = false;
  }
  up(): void {
    this.usable = true;
    for (const l of this.listeners) l();
  }
}
