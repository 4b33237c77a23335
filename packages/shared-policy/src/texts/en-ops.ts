/**
 * English texts of the operator's side (`ops.*`: service crash reports, `agentmail doctor`);
 * part of {@link EN} in en.ts.
 */
export const EN_OPS = {
  // ==== ops (service crash reports, agentmail doctor: see SPEC §8, B-19) ====
  'ops.crash.subject': '{unit} on {host} stopped: {result}',
  'ops.crash.intro': 'The service {unit} on {host} stopped unexpectedly at {at}.',
  'ops.crash.result': 'Result: {result} ({meaning})',
  'ops.crash.exit': 'Exit: {exit_code} {exit_status}',
  'ops.crash.restart':
    'systemd restarts it on its own (Restart=on-failure); after 5 failed starts in 10 minutes it gives up, and you get a report saying start-limit-hit.',
  'ops.crash.log_header': 'The last {n} lines of its log:',
  'ops.crash.no_log': 'Its log could not be read here.',
  'ops.crash.fix': 'See what happened: {status}   ·   the whole log: {journal}',
  'ops.crash.result.success': 'a normal stop',
  'ops.crash.result.protocol': 'it did not start up the way its unit says',
  'ops.crash.result.timeout': 'it did not start or stop within its timeout',
  'ops.crash.result.exit-code': 'it exited with an error code',
  'ops.crash.result.signal': 'it was killed by a signal',
  'ops.crash.result.core-dump': 'it crashed (core dump)',
  'ops.crash.result.watchdog': 'its watchdog fired',
  'ops.crash.result.start-limit-hit': 'it failed too often; systemd no longer restarts it',
  'ops.crash.result.resources': 'systemd could not set it up (a file, directory or limit)',
  'ops.crash.result.oom-kill': 'it ran out of memory and was killed (MemoryMax)',
  'ops.crash.result.other': 'systemd reported "{result}"',
  'ops.doctor.unknown': 'unknown',
  'ops.doctor.node_ok': 'Node.js {version} (>= {min})',
  'ops.doctor.node_old': 'Node.js {version} is older than {min}',
  'ops.doctor.gateway_ok': 'Gateway at {url} (the URL from {from}) answers, version {version}',
  'ops.doctor.gateway_down': 'no Gateway answers at {url} (the URL from {from}): {error}',
  'ops.doctor.token_none': 'no user token: only the Gateway was checked, not the agents',
  'ops.doctor.token_ok': 'your token works',
  'ops.doctor.token_bad': 'your token (from {from}) is refused: {error}',
  'ops.doctor.none_installed': 'no service is installed for this user',
  'ops.doctor.unit_missing': 'no unit file {path}',
  'ops.doctor.unit_ok': 'unit {path} is valid (systemd-analyze verify)',
  'ops.doctor.unit_invalid': 'unit {path} is not valid: {error}',
  'ops.doctor.unit_ok_system':
    'unit {path} is valid (systemd-analyze verify in system mode: there is no user manager here, no login session)',
  'ops.doctor.unit_no_analyze':
    'unit {path} is present; it could not be verified here: systemd-analyze is not installed',
  'ops.doctor.unit_unverified':
    'unit {path} is present; systemd-analyze could not verify it here, in user or system mode: {error}',
  'ops.doctor.program_ok': 'the program the unit starts is there ({path})',
  'ops.doctor.program_missing':
    'the unit starts {path}, which does not exist (not built yet?): the service cannot start',
  'ops.doctor.env_ok': 'env file {path} (mode 0600)',
  'ops.doctor.env_mode': 'env file {path} has mode {mode}: others can read its key',
  'ops.doctor.env_missing': 'no env file {path}',
  'ops.doctor.dir_ok': 'state directory {path} is writable',
  'ops.doctor.dir_bad': 'state directory {path} is missing or not writable',
  'ops.doctor.dir_not_dir': 'state directory {path} is a file, not a directory',
  'ops.doctor.host_no_version': '{path} --version printed no version: it does not look like {host}',
  'ops.doctor.host_slow':
    '{path} --version did not answer within {seconds} s (a busy machine?): its version is not known',
  'ops.doctor.report_key_ok': "the Gateway's crash reports have an agent key that works ({path})",
  'ops.doctor.report_key_missing':
    "no agent key for the Gateway's own crash reports in {path}: they would stay spooled, unseen",
  'ops.doctor.report_key_refused':
    'the Gateway refuses the key for its own crash reports in {path}: they would stay spooled, unseen',
  'ops.doctor.host_ok': '{host} {version} is installed',
  'ops.doctor.host_missing': '{host} is not installed ({path})',
  'ops.doctor.descriptor_bad': 'a host of this checkout cannot be used: {error}',
  'ops.doctor.host_none': '{host} runs inside the bridge: nothing of its own to find',
  'ops.doctor.host_version': '{host} {version} is installed; this bridge is tested with {supported}',
  'ops.doctor.key_missing': 'no agent key or Gateway URL in {path}',
  'ops.doctor.key_ok': 'the Gateway at {url} accepts the agent key',
  'ops.doctor.key_refused': 'the Gateway at {url} refuses the agent key in {path} (unknown or revoked)',
  'ops.doctor.key_unchecked': 'the agent key could not be checked at {url}: {error}',
  'ops.doctor.key_other_name': 'the key is bound to the agent "{bound}", not "{name}"',
  'ops.doctor.not_registered': 'agent {name} is not registered: its bridge has not started with this key yet',
  'ops.doctor.registered': 'agent {name} is registered ({platform}) and the key is bound to it',
  'ops.doctor.online': 'agent {name} is online, last heartbeat {last_seen}',
  'ops.doctor.offline': 'agent {name} is offline, last heartbeat {last_seen}',
  'ops.doctor.never_online': 'agent {name} has never been online',
  'ops.doctor.plugin_builtin': 'the bridge loads its own extension into {host}',
  'ops.doctor.plugin_missing': 'the AgentMail plugin is not configured for {host} ({path})',
  'ops.doctor.plugin_loaded': 'the plugin is configured ({path}) and loaded: its agent is online',
  'ops.doctor.plugin_configured':
    'the plugin is configured ({path}); loaded is not known while the agent is offline',
  'ops.doctor.plugin_unproven':
    'the driver is online, but its host may not have loaded the plugin ({path}): mode enforcement is {mode}, not native ({reason})',
  'ops.doctor.enforcement_native': 'permission modes are enforced natively',
  'ops.doctor.enforcement_advisory': 'permission modes are advisory only: {reason}',
  'ops.doctor.sandbox_verified':
    'workspace sandbox verified (its self-check held): guarded tools in workspace mode run confined, unasked',
  'ops.doctor.sandbox_unverified':
    'workspace sandbox unverified ({reason}): guarded tools in workspace mode ask per call',
  'ops.doctor.enforcement_unknown':
    'mode enforcement is not known: no heartbeat of agent {name} has said it yet',
  'ops.doctor.enforcement_unasked':
    'mode enforcement is not known: the Gateway at {url} (the URL from {from}) could not be asked: {error}',
  'ops.doctor.enforcement_no_token':
    'mode enforcement is not known: without a user token the Gateway at {url} (the URL from {from}) was not asked',
  'ops.doctor.spooled': '{n} crash report(s) wait to be mailed, the oldest from {oldest}',
  'ops.service.not_built': '{path} is not built yet: run {build} before starting',
  'ops.service.no_report_key':
    "no key for the Gateway's own crash reports yet: once it runs, agentmail service install gateway --issue-key --force",
  'ops.service.other_keys':
    'agent {agent} has {count} other active key(s) beside the new key {key_id} of this service; revoke the ones nothing uses: agentmail agent key list, then agentmail agent key revoke <key id>',
  'ops.service.plugin_env': 'the driver loads {path} into every run ({variable})',
  'ops.service.plugin_added': 'added {path} to {list} of {file}',
  'ops.service.plugin_present': '{path} is already in {list} of {file}',
  'ops.service.admin_token':
    'created the Gateway data in its state directory; admin token (shown once, keep it): {token}',
  'ops.service.admin_saved': 'saved it for the CLI in {path} (as agentmail login does)',
  'ops.service.admin_login': 'log in with it: agentmail login --url <url> --token <token>',
  'ops.service.enable': 'enable and start it:',
  'ops.service.nothing_installed': 'nothing installed',
  'ops.service.kept': 'kept    {path} (its data)',
  'ops.service.key_still_active':
    'the agent key of {name} is still active: agentmail agent key revoke {name}   (when this agent is gone for good)',
  'ops.service.still_running':
    '{unit} is still running: its files are removed, its process runs on until stopped; stop it, then reload:',
  'ops.service.maybe_running':
    'whether {unit} still runs cannot be known here (no user manager: no login session); if it does, its process runs on until stopped; stop it, then reload:',
  'ops.service.port_cli':
    'your CLI config {file} still names {old}: agentmail login --url {url} --token <token>   (or edit its url)',
  'ops.service.port_bridge':
    'the {service} bridge still reaches the Gateway at {old} ({file}): agentmail --url {url} service install {service} --force, then systemctl --user restart {unit}',
  'ops.service.then': 'then:',
  'ops.service.report_not_failure': 'service result "{result}": not a failure, no report',
  'ops.service.report_sent': 'report {id} mailed to {to}',
  'ops.service.report_duplicate': 'report {id} mailed to {to} (already sent before)',
  'ops.service.report_spooled': 'report {id} kept in {file}: {error}',
  'ops.service.none_spooled': 'no spooled reports',
  'ops.service.boot_failed': '{url} did not answer',
  // ==== end ops ====
} as const satisfies Record<`ops.${string}`, string>;
