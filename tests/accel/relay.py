"""A torch.distributed backend for testaccel: gloo carries the data, over CPU copies of the
device's tensors. Registered as the default backend for the device, so
`dist.get_default_backend_for_device("testaccel")` names it, as it names nccl for CUDA."""

from __future__ import annotations

from datetime import timedelta
from typing import Any, List

import torch
import torch.distributed as dist
from torch._C._distributed_c10d import _create_work_from_future

BACKEND = "testaccel_relay"


def _done(result: Any) -> Any:
    future: torch.futures.Future = torch.futures.Future()
    future.set_result(result)
    return _create_work_from_future(future)


class RelayProcessGroup(dist.ProcessGroup):
    """Runs each collective on CPU copies with gloo, then copies the results back."""

    def __init__(self, store: Any, rank: int, size: int, timeout: timedelta) -> None:
        super().__init__(rank, size)
        self._gloo = dist.ProcessGroupGloo(dist.PrefixStore("relay", store), rank, size, timeout)

    @staticmethod
    def _host(tensors: List[torch.Tensor]) -> List[torch.Tensor]:
        return [t.detach().to("cpu") for t in tensors]

    @staticmethod
    def _back(tensors: List[torch.Tensor], host: List[torch.Tensor]) -> None:
        for tensor, copy in zip(tensors, host):
            if tensor.device.type != "cpu":
                with torch.no_grad():
                    tensor.copy_(copy)

    def allreduce(self, tensors: List[torch.Tensor], opts: Any = None) -> Any:
        host = self._host(tensors)
        self._gloo.allreduce(host, opts if opts is not None else dist.AllreduceOptions()).wait()
        self._back(tensors, host)
        return _done(tensors)

    def broadcast(self, tensors: List[torch.Tensor], opts: Any = None) -> Any:
        host = self._host(tensors)
        self._gloo.broadcast(host, opts if opts is not None else dist.BroadcastOptions()).wait()
        self._back(tensors, host)
        return _done(tensors)

    def allgather(self, output_lists: List[List[torch.Tensor]], inputs: List[torch.Tensor], opts: Any = None) -> Any:
        host_out = [self._host(outputs) for outputs in output_lists]
        self._gloo.allgather(host_out, self._host(inputs), opts if opts is not None else dist.AllgatherOptions()).wait()
        for outputs, host in zip(output_lists, host_out):
            self._back(outputs, host)
        return _done(output_lists)

    def barrier(self, opts: Any = None) -> Any:
        self._gloo.barrier(opts if opts is not None else dist.BarrierOptions()).wait()
        return _done(None)

    def getBackendName(self) -> str:
        return BACKEND


def _create(store: Any, rank: int, size: int, timeout: timedelta) -> RelayProcessGroup:
    return RelayProcessGroup(store, rank, size, timeout)


def register(device_type: str) -> None:
    if not dist.is_available() or BACKEND.upper() in dist.Backend._plugins:
        return
    dist.Backend.register_backend(BACKEND, _create, devices=[device_type])
