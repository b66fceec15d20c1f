// The combined_fields query over real HTTP; every expected answer below is what OpenSearch 3.4
// answered for the same documents (the documents of search/400_combined_fields.yml). Scores are
// 32-bit floats: compared within a relative 1e-6 (all but one are equal to the last digit).
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { ndjson, startIndexApi, type TestServer } from './helpers'

let api: TestServer

const DOCS = [
  {
    headline: 'Graph Theory and Edge Computing Converge',
    summary: 'Bridging the worlds of graph algorithms and distributed edge devices at scale.',
    content:
      'Industry experts explain how graph data structures enhance edge computing frameworks for real-time analytics at the network edge, illustrating graph traversal techniques executed close to edge devices.',
  },
  {
    headline: 'Edge Computing in the Wild: Deployments Across Continents',
    summary: 'Scaling real-time applications by processing data at the edge.',
    content:
      'Edge gateways, edge devices, and edge sensors form a layered edge architecture that keeps data close to where it is generated. By processing requests at the edge, organisations avoid costly round-trips to central clouds, and edge latency drops dramatically. Multiple independent edge sites synchronise using lightweight protocols. A small knowledge graph records device relationships, but the spotlight stays firmly on the edge environment and its growing ecosystem of edge workloads.\n',
  },
  {
    headline: 'Graph Analytics Today: Algorithms Behind Recommendations',
    summary: 'From social networks to logistics, graph structures unlock hidden insights.',
    content:
      'Graph neural networks, graph embeddings, and large-scale graph processing illustrate the growing importance of graph analytics. Modern graph engines accelerate graph traversal, community detection, and path search to deliver recommendations in milliseconds. Engineers seldom push these compute-heavy jobs to the edge, choosing instead to optimise in-memory graph stores and indexing strategies. The article closes with a brief reference to how edge devices may someday stream data directly into graph pipelines.\n',
  },
  {
    headline: 'Graph Theory Fundamentals: Understanding Network Structures',
    summary: 'Core concepts in graph theory and their applications in modern computing.',
    content:
      "Graph theory provides the mathematical foundation for understanding complex network structures. From social networks to transportation systems, graphs model relationships between entities. Graph algorithms like depth-first search, breadth-first search, and Dijkstra's shortest path algorithm are fundamental tools in computer science. Graph databases store and query these relationships efficiently, enabling powerful analytics on interconnected data.\n",
  },
  { headline: 'Short', k: 'graph' },
]

async function search(query: unknown) {
  return api.call('admin', 'POST', '/cf_test/_search', { query, _source: false })
}
async function hits(query: unknown): Promise<Array<[string, number]>> {
  const r = await search(query)
  if (r.status !== 200) throw new Error(`${r.status}: ${JSON.stringify(r.body)}`)
  return r.body.hits.hits.map((h: any) => [h._id, h._score])
}
function expectHits(got: Array<[string, number]>, want: Array<[string, number]>) {
  expect(got.map(([id]) => id)).toEqual(want.map(([id]) => id))
  want.forEach(([, score], i) => expect(Math.abs(got[i][1] - score)).toBeLessThanOrEqual(score * 1e-6))
}

beforeAll(async () => {
  api = await startIndexApi({ users: { admin: { roles: ['all_access'] } } })
  const properties = { headline: { type: 'text' }, summary: { type: 'text' }, content: { type: 'text' }, k: { type: 'keyword' } }
  expect((await api.call('admin', 'PUT', '/cf_test', { mappings: { properties } })).status).toBe(200)
  await api.call('admin', 'POST', '/cf_test/_bulk?refresh=true', ndjson(DOCS.flatMap((d, i) => [{ index: { _id: String(i + 1) } }, d])))
})
afterAll(() => api.stop())

describe('combined_fields', () => {
  test('BM25F over weighted fields, and / or', async () => {
    expectHits(await hits({ combined_fields: { query: 'graph edge', fields: ['headline^3', 'summary^2', 'content'], operator: 'and' } }), [
      ['1', 0.72455865],
      ['2', 0.59614176],
      ['3', 0.5675329],
    ])
    expectHits(await hits({ combined_fields: { query: 'graph edge', fields: ['headline', 'summary^50', 'content'], operator: 'or' } }), [
      ['1', 0.80532265],
      ['2', 0.65246195],
      ['3', 0.60784304],
      ['4', 0.2802975],
    ])
    expectHits(await hits({ combined_fields: { query: 'graph edge', fields: ['headline', 'summary', 'content'] } }), [
      ['1', 0.6799591],
      ['2', 0.5837393],
      ['3', 0.5444475],
      ['4', 0.22520033],
    ])
    expectHits(await hits({ combined_fields: { query: 'the', fields: ['headline', 'summary'] } }), [
      ['2', 0.5064695],
      ['1', 0.3562954],
    ])
  })

  test('minimum_should_match, boost, field patterns, a repeated term', async () => {
    const fields = ['headline^1.5', 'content']
    expectHits(await hits({ combined_fields: { query: 'graph edge computing', fields, minimum_should_match: 2 } }), [
      ['1', 1.314864],
      ['2', 0.99267286],
      ['3', 0.54114306],
    ])
    expectHits(await hits({ combined_fields: { query: 'graph edge computing', fields, minimum_should_match: '70%', boost: 2 } }), [
      ['1', 2.629728],
      ['2', 1.9853457],
      ['3', 1.0822861],
    ])
    // OpenSearch: 0.8825849 for the first, one float step from what is computed here.
    expectHits(await hits({ combined_fields: { query: 'graph graph edge', fields: ['h*', 'content'] } }), [
      ['1', 0.8825849],
      ['3', 0.78268266],
      ['2', 0.68085253],
      ['4', 0.4294705],
    ])
  })

  test('in a bool, with _name; unmapped or no fields match nothing', async () => {
    const r = await search({ combined_fields: { query: 'graph', fields: ['headline'], _name: 'n' } })
    expect(r.body.hits.hits.map((h: any) => [h._id, h._score, h.matched_queries])).toEqual([
      ['1', 0.23434633, ['n']],
      ['3', 0.23434633, ['n']],
      ['4', 0.23434633, ['n']],
    ])
    expectHits(
      await hits({
        bool: {
          must: [{ combined_fields: { query: 'graph edge', fields: ['headline', 'summary'] } }],
          filter: [{ match: { content: 'edge' } }],
        },
      }),
      [
        ['1', 0.81828564],
        ['2', 0.5064695],
        ['3', 0.3238606],
      ],
    )
    expect(await hits({ combined_fields: { query: 'graph', fields: ['nope'] } })).toEqual([])
    expect(await hits({ combined_fields: { query: 'graph' } })).toEqual([])
  })

  test('requests OpenSearch refuses, in its words', async () => {
    const refused = async (q: Record<string, unknown>) => {
      const r = await search({ combined_fields: q })
      expect(r.status).toBe(400)
      return r.body.error
    }
    expect((await refused({ query: 'graph', fields: ['headline^0.5'] })).root_cause[0].reason).toBe(
      'failed to create query: weight must be greater or equal to 1',
    )
    expect((await refused({ query: 'graph', fields: ['headline', 'k'] })).root_cause[0].reason).toBe(
      'failed to create query: Field [k] of type [keyword] does not support [combined_fields] queries',
    )
    expect(await refused({ fields: ['headline'] })).toMatchObject({ type: 'illegal_argument_exception', reason: 'Required [query]' })
    expect((await refused({ query: 'graph', fields: ['headline'], bogus: 1 })).reason).toBe('[combined_fields] unknown field [bogus]')
    expect((await refused({ query: 'graph', fields: ['headline'], operator: 'xor' })).caused_by.reason).toBe(
      'No enum constant org.opensearch.index.query.Operator.XOR',
    )
  })
})
