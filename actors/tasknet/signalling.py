"""Peer signalling and WebRTC data channels (aiortc) between nodes.

Signals are signed by their sender's Ed25519 key and relayed node to node; an offer is
answered with a peer connection whose data channel then carries gossip (events as JSON).
ICE gathers loopback host candidates only and uses no STUN/TURN server, so no packet
leaves the machine. Connection and ICE statistics come from the live connections.
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Mapping
from typing import Any, Protocol

from actors.tasknet.canonical import canonical
from actors.tasknet.identity import node_id_of, verify
from actors.tasknet.ledger import Reject
from actors.tasknet.node import NodeCore
from actors.tasknet.records import Event
from actors.tasknet.settings import WebrtcParams
from rayfleet.tasks import BackgroundTasks

SIGNAL_TYPES = ("offer", "answer")
MAX_HANDSHAKES = 256  # strangers remembered at once (joined nodes are known from the state)
HANDSHAKE_TTL_S = 600.0
MAX_PEER_CONNECTIONS = 64
CONNECT_TIMEOUT_S = 30.0  # a peer connection not connected by then is closed and forgotten
SDP_NEEDS = ("m=application", "a=ice-ufrag:", "a=ice-pwd:", "a=fingerprint:")


def check_sdp(sdp: str) -> None:
    """Refuse what is not a WebRTC data-channel session description before any connection exists."""
    lines = [line.strip() for line in sdp.splitlines()]
    if not lines or lines[0] != "v=0" or not all(any(line.startswith(n) for line in lines) for n in SDP_NEEDS):
        raise Reject("sdp is not a WebRTC data channel session description (v=0, m=application, ICE, fingerprint)")


class Transport(Protocol):
    """What signalling uses of the node actor (TaskNode): its peer names, a peer call, its task group."""

    @property
    def peer_ids(self) -> Mapping[str, str]: ...
    @property
    def blocked(self) -> set[str]: ...
    @property
    def tasks(self) -> BackgroundTasks: ...
    async def _signal_peer(self, name: str, **kwargs: Any) -> dict[str, Any] | None: ...
    async def receive_events(self, events: list[Any], sender: str) -> int: ...


def _restrict_ice_to(addresses: list[str]) -> None:
    """aioice gathers every non-loopback interface; a node here uses the given ones only."""
    import aioice.ice

    aioice.ice.get_host_addresses = lambda use_ipv4, use_ipv6: list(addresses)


class Signalling:
    def __init__(self, core: NodeCore, settings: WebrtcParams) -> None:
        self.core = core
        self.enabled = bool(settings.get("enabled", True))
        self.addresses = list(settings.get("host_addresses", ["127.0.0.1"]))
        self.known: dict[str, dict[str, Any]] = {}
        self.pcs: dict[str, Any] = {}
        self.channels: dict[str, Any] = {}
        self.received: dict[str, int] = {}
        self.sent: dict[str, int] = {}
        self.on_events: Any = None

    def _sign(self, body: dict[str, Any]) -> dict[str, Any]:
        return {**body, "signature": self.core.identity.sign(canonical(body))}

    def _public_key(self, node_id: str) -> str | None:
        record = self.core.state["nodes"].get(node_id) or self.known.get(node_id)
        return record["public_key"] if record else None

    async def handshake(self, actor: Transport, node_id: str, public_key: str) -> dict[str, Any]:
        try:
            derived = node_id_of(public_key)
        except ValueError as exc:
            raise Reject("public_key is not base64") from exc
        if derived != node_id:
            raise Reject("node_id does not derive from public_key", 403)
        now = time.time()
        self.known = {n: k for n, k in self.known.items() if now - k["at"] < HANDSHAKE_TTL_S}
        if node_id not in self.core.state["nodes"]:
            self.known.pop(node_id, None)
            while len(self.known) >= MAX_HANDSHAKES:
                self.known.pop(next(iter(self.known)))  # the oldest handshake goes first
            self.known[node_id] = {"public_key": public_key, "at": now}
        peers = sorted((set(self.core.state["nodes"]) | set(self.known)) - {node_id})
        return {"message": "handshake accepted", "peers": peers}

    async def relay(self, actor: Transport, target_peer_id: str, signal_data: dict[str, Any]) -> dict[str, Any]:
        """Deliver a signal to `target_peer_id` (this node, or a peer reached through the cluster)."""
        if target_peer_id == self.core.node_id:
            return await self.receive(actor, signal_data.get("from", ""), signal_data)
        by_id = {i: n for n, i in actor.peer_ids.items()}
        name = by_id.get(target_peer_id)
        if name is None or name in actor.blocked:
            raise Reject(f"peer {target_peer_id} is not reachable from this node", 404)
        answer = await actor._signal_peer(
            name,
            action="receive",
            from_peer_id=signal_data.get("from", ""),
            signal_data=signal_data,
        )
        if not answer or "error" in answer:
            raise Reject((answer or {}).get("error", "peer did not answer"), (answer or {}).get("status", 503))
        return {"message": "signal relayed", "target_peer_id": target_peer_id, "delivered": True}

    async def receive(self, actor: Transport, from_peer_id: str, signal_data: dict[str, Any]) -> dict[str, Any]:
        body = {k: signal_data.get(k) for k in ("from", "to", "type", "sdp")}
        key = self._public_key(from_peer_id)
        if key is None or body["from"] != from_peer_id or body["to"] != self.core.node_id:
            raise Reject("unknown sender or signal not addressed to this node", 403)
        if body["type"] not in SIGNAL_TYPES or not isinstance(body["sdp"], str) or len(body["sdp"]) > 20_000:
            raise Reject("signal_data needs type offer|answer and an sdp string")
        if not verify(key, canonical(body), str(signal_data.get("signature", ""))):
            raise Reject("signal signature invalid", 403)
        if not self.enabled:
            raise Reject("WebRTC is disabled on this node", 503)
        check_sdp(body["sdp"])
        from aiortc import RTCSessionDescription

        if body["type"] == "offer":
            pc = self._new_pc(actor, from_peer_id)
            try:
                await pc.setRemoteDescription(RTCSessionDescription(sdp=body["sdp"], type="offer"))
                await pc.setLocalDescription(await pc.createAnswer())
            except Exception as exc:  # aiortc refuses it: nothing of the attempt is kept
                await self._forget(from_peer_id, pc)
                raise Reject(f"the offer cannot be answered: {type(exc).__name__}") from exc
            reply = self._sign(
                {"from": self.core.node_id, "to": from_peer_id, "type": "answer", "sdp": pc.localDescription.sdp}
            )
            actor.tasks.start(self.relay(actor, from_peer_id, reply), name="webrtc-answer")
            return {"message": "offer accepted; answer sent", "from_peer_id": from_peer_id}
        pc = self.pcs.get(from_peer_id)
        if pc is None:
            raise Reject("no offer is pending for that peer", 404)
        await pc.setRemoteDescription(RTCSessionDescription(sdp=body["sdp"], type="answer"))
        return {"message": "answer accepted", "from_peer_id": from_peer_id}

    async def _forget(self, peer_id: str, pc: Any) -> None:
        if self.pcs.get(peer_id) is pc:
            del self.pcs[peer_id]
            self.channels.pop(peer_id, None)
        await pc.close()

    async def _expire(self, peer_id: str, pc: Any) -> None:
        await asyncio.sleep(CONNECT_TIMEOUT_S)
        if pc.connectionState != "connected":
            await self._forget(peer_id, pc)

    def _new_pc(self, actor: Transport, peer_id: str) -> Any:
        from aiortc import RTCConfiguration, RTCPeerConnection

        _restrict_ice_to(self.addresses)
        old = self.pcs.pop(peer_id, None)
        if old is not None:
            actor.tasks.start(old.close(), name="webrtc-close")
        if len(self.pcs) >= MAX_PEER_CONNECTIONS:
            raise Reject(f"this node holds {MAX_PEER_CONNECTIONS} peer connections already", 503)
        pc = RTCPeerConnection(RTCConfiguration(iceServers=[]))
        self.pcs[peer_id] = pc
        actor.tasks.start(self._expire(peer_id, pc), name="webrtc-expire")

        @pc.on("datachannel")
        def on_datachannel(channel: Any) -> None:
            self._attach(actor, peer_id, channel)

        return pc

    def _attach(self, actor: Transport, peer_id: str, channel: Any) -> None:
        self.channels[peer_id] = channel

        def on_message(message: Any) -> None:
            self.received[peer_id] = self.received.get(peer_id, 0) + 1
            try:
                events = json.loads(message)
            except ValueError:
                return
            if isinstance(events, list):
                actor.tasks.start(actor.receive_events(events, "webrtc:" + peer_id), name="webrtc-receive")

        channel.on("message", on_message)

    async def connect(self, actor: Transport, peer_id: str) -> dict[str, Any]:
        if not self.enabled:
            raise Reject("WebRTC is disabled on this node", 503)
        pc = self._new_pc(actor, peer_id)
        self._attach(actor, peer_id, pc.createDataChannel("tasknet-gossip"))
        await pc.setLocalDescription(await pc.createOffer())
        offer = self._sign({"from": self.core.node_id, "to": peer_id, "type": "offer", "sdp": pc.localDescription.sdp})
        return await self.relay(actor, peer_id, offer)

    def open_channels(self) -> dict[str, Any]:
        return {p: c for p, c in self.channels.items() if c.readyState == "open"}

    def send_events(self, peer_id: str, events: list[Event]) -> bool:
        channel = self.open_channels().get(peer_id)
        if channel is None:
            return False
        channel.send(json.dumps(events, separators=(",", ":")))
        self.sent[peer_id] = self.sent.get(peer_id, 0) + 1
        return True

    async def connections(self, actor: Transport) -> dict[str, Any]:
        out = []
        for peer_id, pc in sorted(self.pcs.items()):
            channel = self.channels.get(peer_id)
            out.append(
                {
                    "peer_id": peer_id,
                    "state": pc.connectionState,
                    "ice_connection_state": pc.iceConnectionState,
                    "data_channel_state": channel.readyState if channel else "none",
                    "messages_sent": self.sent.get(peer_id, 0),
                    "messages_received": self.received.get(peer_id, 0),
                }
            )
        return {"connections": out}

    async def ice_metrics(self, actor: Transport) -> dict[str, Any]:
        metrics = []
        for peer_id, pc in sorted(self.pcs.items()):
            connection = _ice_connection(pc)
            pairs, selected = [], None
            if connection is not None:
                for pair in getattr(connection, "_check_list", []):
                    pairs.append(_pair(pair))
                nominated = getattr(connection, "_nominated", {})
                if nominated:
                    selected = _pair(next(iter(nominated.values())))
            stats = await pc.getStats()
            transport = [
                {
                    "type": s.type,
                    "bytes_sent": getattr(s, "bytesSent", None),
                    "bytes_received": getattr(s, "bytesReceived", None),
                }
                for s in stats.values()
                if s.type == "transport"
            ]
            metrics.append(
                {"peer_id": peer_id, "candidate_pairs": pairs, "selected_pair": selected, "transport": transport}
            )
        return {"metrics": metrics}

    async def close(self) -> None:
        for pc in list(self.pcs.values()):
            await pc.close()
        self.pcs.clear()
        self.channels.clear()


def _ice_connection(pc: Any) -> Any:
    try:
        return pc.sctp.transport.transport._connection
    except AttributeError:
        return None


def _pair(pair: Any) -> dict[str, Any]:
    return {
        "local": f"{pair.local_candidate.type} {pair.local_candidate.host}:{pair.local_candidate.port}",
        "remote": f"{pair.remote_candidate.type} {pair.remote_candidate.host}:{pair.remote_candidate.port}",
        "state": getattr(pair.state, "name", str(pair.state)).lower(),
        "nominated": bool(getattr(pair, "nominated", False)),
    }
