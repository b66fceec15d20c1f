import { join } from 'node:path'
import { spawnBinary } from '../../../test/helpers/spawn-binary'

export { spawnBinary }

/** Starts a bench helper script (it announces its URL on its first stdout line, like svc-ext). */
export async function spawnScript(script: string, args: string[] = []) {
  const proc = Bun.spawn([process.execPath, join(import.meta.dir, script), ...args], { stdout: 'pipe', stderr: 'inherit' })
  const reader = proc.stdout.getReader()
  const decoder = new TextDecoder()
  let text = ''
  while (!text.includes('\n')) {
    const { done, value } = await reader.read()
    if (done) throw new Error(`${script} exited before announcing its URL: ${text}`)
    text += decoder.decode(value, { stream: true })
  }
  const url = JSON.parse(text.slice(0, text.indexOf('\n'))).url as string
  void (async () => {
    while (!(await reader.read()).done);
  })()
  return { url, stop: async () => (proc.kill(), await proc.exited) }
}
