export interface TopicReplicationOptions {
  readonly replicationFactor?: number;
  readonly minInsyncReplicas?: number;
}

export interface TopicReplication {
  readonly replicationFactor: number;
  readonly minInsyncReplicas: number;
}

/**
 * The replication of the topics a bus creates: `replicationFactor` (1 when unset) and
 * `min.insync.replicas` (one less than the factor when unset, at least 1).
 */
export function topicReplication(options: TopicReplicationOptions): TopicReplication {
  const replicationFactor = options.replicationFactor ?? 1;
  const minInsyncReplicas = options.minInsyncReplicas ?? Math.max(1, replicationFactor - 1);
  if (!Number.isInteger(replicationFactor) || replicationFactor < 1) {
    throw new RangeError(`replication factor ${replicationFactor}: a whole number of at least 1`);
  }
  if (
    !Number.isInteger(minInsyncReplicas) ||
    minInsyncReplicas < 1 ||
    minInsyncReplicas > replicationFactor
  ) {
    throw new RangeError(
      `min.insync.replicas ${minInsyncReplicas}: a whole number from 1 to the replication factor ${replicationFactor}`,
    );
  }
  return { replicationFactor, minInsyncReplicas };
}
