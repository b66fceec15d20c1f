export { applies, compileFilter, FilterDocument, type FilterTarget, isFilterDocument, parseFilterDocument, withFilters } from './filter'
export { loadFilters, MAX_FILTERS, type StoredFilter } from './load'
