/** mulberry32: a small seeded PRNG, so that a seed always produces the same traffic. */
export class Random {
  private state: number;

  constructor(seed: number) {
    this.state = seed >>> 0;
  }

  next(): number {
    this.state = (this.state + 0x6d2b79f5) >>> 0;
    let t = this.state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296;
  }

  int(maxExclusive: number): number {
    return Math.floor(this.next() * maxExclusive);
  }

  pick<T>(items: readonly T[]): T {
    return items[this.int(items.length)];
  }

  chance(probability: number): boolean {
    return this.next() < probability;
  }
}

/** Picks from weighted choices in O(log n) after an O(n) set-up. */
export class Weighted<T> {
  private readonly cumulative: number[] = [];
  private readonly total: number;

  constructor(private readonly choices: readonly (readonly [T, number])[]) {
    let sum = 0;
    for (const [, weight] of choices) {
      sum += weight;
      this.cumulative.push(sum);
    }
    this.total = sum;
  }

  pick(random: Random): T {
    const target = random.next() * this.total;
    let lo = 0;
    let hi = this.cumulative.length - 1;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (this.cumulative[mid] > target) {
        hi = mid;
      } else {
        lo = mid + 1;
      }
    }
    return this.choices[lo][0];
  }
}
