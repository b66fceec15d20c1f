import { join } from "node:path";
import { spawnBinary } from "../../../test/helpers/spawn-binary";

export { spawnBinary };

/** Starts a bench helper script (it announces its URL like svc-ext does). */
export async function spawnScript(script: string, args: string[] = []) {
  const proc = Bun.spawn([process.execPath, join(import.meta.dir, script), ...args], { stdout: "pipe", stderr: "inherit" });
  const reader = proc.stdout.getReader();
  const { value } = await reader.read();
  const url = JSON.parse(new TextDecoder().decode(value).split("\n")[0]).url as string;
  void (async () => {
    while (!(await reader.read()).done);
  })();
  return { url, stop: async () => (proc.kill(), await proc.exited) };
}
