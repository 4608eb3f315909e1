/** The last `capacity` items, overwritten in place so that recording costs no allocation once full. */
export class RingBuffer<T> {
  private readonly items: T[] = [];
  private next = 0;

  constructor(private readonly capacity: number) {}

  push(item: T): void {
    if (this.items.length < this.capacity) {
      this.items.push(item);
    } else {
      this.items[this.next] = item;
    }
    this.next = (this.next + 1) % this.capacity;
  }

  /** Oldest first. */
  toArray(): T[] {
    if (this.items.length < this.capacity) {
      return this.items.slice();
    }
    return [...this.items.slice(this.next), ...this.items.slice(0, this.next)];
  }

  clear(): void {
    this.items.length = 0;
    this.next = 0;
  }
}
