/** The OpenSearch plugins whose REST APIs this node serves, as `_cat/plugins` and `_nodes` list them. */
import { COMPATIBLE_OPENSEARCH_VERSION } from './cluster'

const PLUGIN_VERSION = `${COMPATIBLE_OPENSEARCH_VERSION}.0`

export const PLUGIN_COMPONENTS: Array<{ name: string; version: string; description: string; classname: string }> = [
  {
    name: 'opensearch-index-management',
    description: 'Index lifecycle policies (ISM)',
    classname: 'org.opensearch.indexmanagement.IndexManagementPlugin',
  },
  {
    name: 'opensearch-security',
    description: 'Authentication, roles and document-level security',
    classname: 'org.opensearch.security.OpenSearchSecurityPlugin',
  },
  {
    name: 'opensearch-security-analytics',
    description: 'Sigma rules, detectors and findings',
    classname: 'org.opensearch.securityanalytics.SecurityAnalyticsPlugin',
  },
].map((p) => ({ ...p, version: PLUGIN_VERSION }))
