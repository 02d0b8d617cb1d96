"""Which of PCP's GPUs Ray gave a worker. Ray's GPU ids are CUDA's device numbers (or UUIDs, when
CUDA_VISIBLE_DEVICES named GPUs so); PCP's GPUs are Vulkan's, in the driver's order. The two
orders need not agree, so they meet at the GPU's UUID, which both report."""
import ctypes


def normalize_uuid(uuid):
    """A GPU UUID as 32 lowercase hex digits: 'GPU-1a2b3c4d-...' (nvidia-smi, NVML) or PCP's form."""
    u = str(uuid).strip().lower()
    return (u[4:] if u.startswith("gpu-") else u).replace("-", "")


def nvml_uuids():
    """The NVIDIA GPUs' UUIDs (normalize_uuid's form) by NVML index: PCI bus order, which is
    nvidia-smi's and, for identical GPUs or with CUDA_DEVICE_ORDER=PCI_BUS_ID, CUDA's. [] where
    there is no NVIDIA driver."""
    try:
        nvml = ctypes.CDLL("libnvidia-ml.so.1")
    except OSError:
        return []
    if nvml.nvmlInit_v2() != 0:
        return []
    try:
        count = ctypes.c_uint()
        if nvml.nvmlDeviceGetCount_v2(ctypes.byref(count)) != 0:
            return []
        uuids = []
        for i in range(count.value):
            handle, text = ctypes.c_void_p(), ctypes.create_string_buffer(96)
            if nvml.nvmlDeviceGetHandleByIndex_v2(i, ctypes.byref(handle)) or nvml.nvmlDeviceGetUUID(handle, text, 96):
                return []
            uuids.append(normalize_uuid(text.value.decode()))
        return uuids
    finally:
        nvml.nvmlShutdown()


def gpu_index(ray_id, pcp_uuids, cuda_uuids=None):
    """The index into PCP's GPUs of the GPU Ray calls ray_id.

    Args:
        ray_id: an id from ray.get_gpu_ids(): a CUDA device number, or a UUID (whole, or a
            prefix, as CUDA_VISIBLE_DEVICES allows).
        pcp_uuids: PCP's GPUs' UUIDs, in PCP's order (pcp.gpu_info(...)["uuid"]).
        cuda_uuids: the UUIDs by CUDA device number (default: nvml_uuids()).

    Returns:
        (index, how): how is 'uuid' when the UUIDs matched, else 'index' (ray_id taken as PCP's
        index, modulo the GPU count: no NVIDIA driver, as with Mesa's devices).

    Example:
        >>> from pcp.distributed.gpus import gpu_index
        >>> gpu_index("1", ["bb" * 16, "aa" * 16], cuda_uuids=["aa" * 16, "bb" * 16])
        (0, 'uuid')
    """
    rid = str(ray_id).strip()
    if rid.isdigit():
        table = nvml_uuids() if cuda_uuids is None else cuda_uuids
        uuid = table[int(rid)] if int(rid) < len(table) else None
    else:
        uuid = normalize_uuid(rid)
    matches = [i for i, u in enumerate(pcp_uuids) if uuid and u.startswith(uuid)]
    if len(matches) == 1:
        return matches[0], "uuid"
    return (int(rid) % len(pcp_uuids) if rid.isdigit() else 0), "index"


def check_own_gpus(shepherd, results):
    """Workers given a whole GPU each (Ray's num_gpus >= 1) must be on different GPUs, told
    apart by UUID: a message says which share one (once for each such finding)."""
    if shepherd.gpus_per_worker < 1:
        return
    by_gpu = {}
    for r in results:
        if r["device_uuid"]:
            by_gpu.setdefault(r["device_uuid"], []).append(r["rank"])
    for uuid, ranks in by_gpu.items():
        if len(ranks) > 1 and (uuid, tuple(ranks)) not in shepherd._shared_reported:
            shepherd._shared_reported.add((uuid, tuple(ranks)))
            shepherd.report({"kind": "message", "text": f"workers {ranks} share GPU {uuid} though each was given "
                                                        f"a whole GPU (found by {sorted({r['device_by'] for r in results})}): check the GPU mapping"})
