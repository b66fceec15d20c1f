import { expect, test } from 'bun:test'
import { SettingsSnapshot } from '../../../src/config/cluster-settings'
import { buildNodeConfig } from '../../../src/config/node-config'
import { createEngineClient, engineOptionsFromSettings } from '../../../src/content/engine'
import { recordingLog } from './helpers'

const snapshot = (raw: Record<string, unknown>) => new SettingsSnapshot(buildNodeConfig(raw, 'test', '.').values)

test('defaults are the spec values', () => {
  const options = engineOptionsFromSettings(snapshot({}), recordingLog())
  expect(options).toMatchObject({
    socketPath: '/usr/share/svc-indexer/engine/sockets/engine-api-http.sock',
    mock: false,
    reloadTimeoutMinutes: 10,
    notReadyGraceMinutes: 5,
  })
})

test('node settings reach the client', async () => {
  const options = engineOptionsFromSettings(
    snapshot({
      'plugins.content_manager.engine.socket_path': '/run/engine.sock',
      'plugins.content_manager.engine.mock': true,
      'plugins.content_manager.engine.reload_timeout_minutes': 3,
      'plugins.content_manager.engine.not_ready_grace_minutes': 7,
    }),
    recordingLog(),
  )
  expect(options).toMatchObject({ socketPath: '/run/engine.sock', mock: true, reloadTimeoutMinutes: 3, notReadyGraceMinutes: 7 })
  // Mock mode from the setting answers without the (absent) socket.
  expect(await createEngineClient(options).iocState()).toEqual({ hash: '', updating: false })
})
