-- Argo CD health for StatefulSets (resource.customizations.health.apps_StatefulSet) that knows about
-- phased-rollout: a StatefulSet whose partition is pinned looks "complete" to Argo CD's built-in check,
-- so a gated rollout that has not happened yet would be reported Healthy. This script reports
-- Progressing while a gated rollout is pending, Suspended while it is paused, Degraded when it Failed
-- (or was RolledBack) or its annotations are Invalid. StatefulSets that are not opted in get Argo CD's built-in verdicts.
-- Tested under gopher-lua, the interpreter Argo CD embeds (test/e2e/argocd-health.test.ts).
local hs = {}
local spec = obj.spec or {}
local status = obj.status or {}
local meta = obj.metadata or {}
local ann = meta.annotations or {}
local replicas = spec.replicas or 1
local ready = status.readyReplicas or 0
local updated = status.updatedReplicas or 0

local function result(s, m)
  hs.status = s
  hs.message = m
  return hs
end

-- The built-in verdicts (Argo CD's Go check for StatefulSets, restated).
local function builtin()
  if (meta.generation or 0) > (status.observedGeneration or 0) then
    return result("Progressing", "Waiting for statefulset spec update to be observed...")
  end
  if ready < replicas then
    return result("Progressing", string.format("Waiting for %d pods to be ready...", replicas - ready))
  end
  local strategy = spec.updateStrategy or {}
  if strategy.type == "OnDelete" then
    return result("Healthy", string.format("statefulset has %d ready pods", ready))
  end
  local partition = (strategy.rollingUpdate or {}).partition or 0
  if partition > 0 then
    if updated < replicas - partition then
      return result("Progressing", string.format("Waiting for partitioned roll out to finish: %d out of %d new pods have been updated...", updated, replicas - partition))
    end
    return result("Healthy", string.format("partitioned roll out complete: %d new pods have been updated...", updated))
  end
  if status.updateRevision ~= status.currentRevision then
    return result("Progressing", string.format("waiting for statefulset rolling update to complete %d pods at revision %s...", updated, tostring(status.updateRevision)))
  end
  return result("Healthy", string.format("statefulset rolling update complete %d pods at revision %s...", ready, tostring(status.currentRevision)))
end

local enabled = ann["phased-rollout.io/enabled"]
if enabled == nil or enabled == "false" then
  return builtin()
end
if enabled ~= "true" then
  return result("Degraded", "phased-rollout: invalid phased-rollout.io/enabled value " .. tostring(enabled))
end

-- The controller's report: compact JSON; only two string fields are read, without a JSON library
-- (Argo CD's Lua has none). Anything unreadable counts as no report.
local raw = ann["phased-rollout.io/status"] or ""
local phase = string.match(raw, '"phase":"(%a+)"')
local message = string.match(raw, '"message":"(.-)","') or ""
local function said(default)
  if message ~= "" then return "phased-rollout: " .. tostring(phase) .. ": " .. message end
  return default
end

if phase == "Failed" or phase == "Invalid" or phase == "RolledBack" then
  return result("Degraded", said("phased-rollout: " .. tostring(phase)))
end
if ann["phased-rollout.io/standard-rolling-update"] == "true" then
  return builtin()
end
if phase == "Paused" or ann["phased-rollout.io/paused"] == "true" then
  return result("Suspended", said("phased-rollout: paused"))
end
if (meta.generation or 0) > (status.observedGeneration or 0) then
  return result("Progressing", "Waiting for statefulset spec update to be observed...")
end
-- Judged by the StatefulSet's own status, not only by our report: a pinned revision is pending when
-- the update revision is not current yet or some pod is not on it.
local pending = status.updateRevision ~= nil and status.updateRevision ~= status.currentRevision
if pending or updated < replicas then
  return result("Progressing", said(string.format("phased-rollout: gated rollout pending: %d/%d pods on revision %s", updated, replicas, tostring(status.updateRevision))))
end
if ready < replicas then
  return result("Progressing", string.format("Waiting for %d pods to be ready...", replicas - ready))
end
if phase == "WaitingForPods" or phase == "Baking" or phase == "Checking" or phase == "RollingBack" then
  -- Every pod is on the revision, and the final check runs before Completed.
  return result("Progressing", said("phased-rollout: verifying the last pod"))
end
return result("Healthy", said(string.format("phased-rollout: %d pods on revision %s", ready, tostring(status.currentRevision))))
