import { openEmbeddedStore } from '../../src/store/embedded'
import { runStoreContract } from './contract'

runStoreContract('embedded (:memory:)', () => openEmbeddedStore(':memory:'))
