export {
  correlationRule,
  CORRELATION_TYPES,
  type CorrelationDocument,
  type CorrelationRule,
  holds,
  isCorrelationDocument,
  parseCorrelationDocument,
  parseTimespan,
} from './document'
export {
  type CorrelationFinding,
  type CorrelationInput,
  Correlator,
  type GroupStore,
  groupDocId,
  MemoryGroups,
  orderChains,
  type ResolvedCorrelation,
} from './engine'
export { StoreGroups } from './state'
export { advance, MAX_GROUP_EVENTS, measure } from './window'
