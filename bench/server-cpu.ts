import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';

/**
 * CPU microseconds (user + system) used so far by the local processes whose command line matches
 * `pattern` (the stack's ClickHouse and Kafka beside a benchmark), from /proc; 0 when none runs here.
 */
export function serverCpuMicros(pattern: string): number {
  let pids: string[];
  try {
    pids = execFileSync('pgrep', ['-f', pattern], { encoding: 'utf8' }).trim().split('\n');
  } catch {
    return 0;
  }
  let ticks = 0;
  for (const pid of pids) {
    try {
      // Fields after the command (which may hold spaces): utime and stime are the 12th and 13th.
      const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      ticks += Number(fields[11]) + Number(fields[12]);
    } catch {
      // The process ended meanwhile.
    }
  }
  return ticks * 10_000; // USER_HZ is 100 on Linux
}
