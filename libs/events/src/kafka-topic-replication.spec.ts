import { describe, expect, it } from 'vitest';
import { topicReplication } from './kafka-topic-replication';

describe('topicReplication', () => {
  it('is one copy on one broker by default', () => {
    expect(topicReplication({})).toEqual({ replicationFactor: 1, minInsyncReplicas: 1 });
  });

  it.each([
    [2, 1],
    [3, 2],
    [5, 4],
  ])('asks all copies but one by default: factor %i, min.insync.replicas %i', (factor, minInsync) => {
    expect(topicReplication({ replicationFactor: factor })).toEqual({
      replicationFactor: factor,
      minInsyncReplicas: minInsync,
    });
  });

  it('takes a min.insync.replicas up to the factor', () => {
    expect(topicReplication({ replicationFactor: 3, minInsyncReplicas: 3 }).minInsyncReplicas).toBe(3);
    expect(topicReplication({ replicationFactor: 3, minInsyncReplicas: 1 }).minInsyncReplicas).toBe(1);
  });

  it.each([
    [{ replicationFactor: 0 }, 'replication factor 0'],
    [{ replicationFactor: 1.5 }, 'replication factor 1.5'],
    [{ replicationFactor: 3, minInsyncReplicas: 4 }, 'min.insync.replicas 4'],
    [{ replicationFactor: 3, minInsyncReplicas: 0 }, 'min.insync.replicas 0'],
    [{ minInsyncReplicas: 2 }, 'to the replication factor 1'],
  ])('refuses %o', (options, message) => {
    expect(() => topicReplication(options)).toThrow(message);
  });
});
