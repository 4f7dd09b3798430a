// The host stand-in for the NCCL collectives (docs/design.md section 13): `host-collective`, a collective of a
// tenant's ranks (one worker process each) on gloo, the collective library PyTorch uses on CPUs, over TCP
// on this host. The ranks meet through the harness's rendezvous (ExecContext::rendezvous): gloo's store is
// backed by it, so no port or address is chosen by hand. Built where Debian's libgloo-dev was found
// (IB_HAVE_GLOO); elsewhere the workload is waived with that reason.
#pragma once

#include "kernels/workload.h"

namespace ib {

void register_gloo_workloads(Registry& registry);

}  // namespace ib
