/** Every aggregation type defined outside aggs.ts registers itself when its module loads. */
import './aggs-buckets'
import './aggs-composite'
import './aggs-metrics'
import './aggs-multi-terms'
import './aggs-rare-terms'
import './aggs-top-hits'
import './aggs-pipeline'
