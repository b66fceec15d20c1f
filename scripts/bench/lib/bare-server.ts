// Baseline server for benchmarks: a bare Bun.serve answering a fixed JSON body, in its own process.
const body = process.argv[2] ?? '{"ok":true}'
const server = Bun.serve({
  port: 0,
  hostname: '127.0.0.1',
  fetch: () => new Response(body, { headers: { 'content-type': 'application/json' } }),
})
console.log(JSON.stringify({ msg: 'svc-ext started', url: `http://127.0.0.1:${server.port}` }))
