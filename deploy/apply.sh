#!/bin/sh
# Installs edgeslice in one cluster: each step a `kubectl apply -k`, in the order the objects need each other
# (docs/deploy.md). Run it from anywhere, once per cluster, with that cluster's overlays:
#
#   deploy/apply.sh SYNC_OVERLAY [ROUTER_OVERLAY]
#   KUBECTL="kubectl --context east" deploy/apply.sh deploy/overlays/east deploy/overlays/east-router
#
# Create the Secrets first (they are never part of a kustomization): the sync's edgeslice-redis-sync, the
# routers' edgeslice-redis-router, optionally edgeslice-router-admin and edgeslice-tls-store-key, in the
# namespace edgeslice (`kubectl apply -f SYNC_OVERLAY/namespace.yaml` creates it). Pods wait for them.
set -eu

if [ $# -lt 1 ] || [ $# -gt 2 ]; then
  echo "usage: $0 SYNC_OVERLAY [ROUTER_OVERLAY]   e.g. $0 deploy/overlays/east deploy/overlays/east-router" >&2
  exit 2
fi
KUBECTL=${KUBECTL:-kubectl}
DEPLOY=$(dirname "$0")

# 1. The classes that make Ingresses and Gateways ours (cluster-scoped). The GatewayClass needs the Gateway API
#    CRDs; without them the sync still routes Services and Ingresses, and notices the CRDs when they come.
$KUBECTL apply -k "$DEPLOY/ingress-class"
if $KUBECTL get crd gatewayclasses.gateway.networking.k8s.io >/dev/null 2>&1; then
  $KUBECTL apply -k "$DEPLOY/gateway-class"
else
  echo "the Gateway API CRDs are not installed: skipping deploy/gateway-class (apply it once they are)" >&2
fi

# 2. The sync: its namespace, ServiceAccount and RBAC, then its Deployment (one kustomization, applied in that
#    order by kubectl).
$KUBECTL apply -k "$1"

# 3. The routers, where this cluster runs some.
if [ $# -eq 2 ]; then
  $KUBECTL apply -k "$2"
fi
