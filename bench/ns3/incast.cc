/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* ns3-incast: qpace's incast as an ns-3 program, the other side of the virtual-time
 * speed comparison (bench/ns3/compare.sh, docs/performance.md "Virtual time vs ns-3").
 *
 *   ns3-incast [-N SENDERS] [-s SIZE] [-R ROUNDS] [--rate R] [--buffer B] [--delay T]
 *              [--mtu M] [--window P] [--transport tcp|udp] [--timeout T] [--seed S] [-j]
 *
 * The only C++ in qpace: ns-3 is a C++ library (templates, Ptr<>, callbacks bound to
 * member functions), so the program that drives it has to be C++. It links qpace's lib
 * layer for what every qpace program shares: the option engine, the unit parsers (so
 * "256K", "1G", "100us" mean what they mean to qpace-bench) and the printer (text or
 * one JSON line, -j). It is built only by `make bench-ns3`, never by `make all`.
 *
 * The scenario is qpace-bench incast's, flag for flag and with its defaults: N senders
 * and one receiver, each on its own point-to-point link (RATE both ways, DELAY of
 * propagation) to one switch; every switch egress has a drop-tail queue of BUFFER bytes
 * (the receiver's is the bottleneck); each round every sender sends SIZE bytes to the
 * receiver at once, a round ends when the last flow is complete, the next starts 2 ms
 * later. The "switch" is an ns-3 IPv4 router (point-to-point devices cannot be bridged);
 * routes come from Ipv4GlobalRoutingHelper, the stock way. Queue discs are uninstalled,
 * so each device's own DropTailQueue is the only queue, as in qpace's switch model.
 *
 * Senders (--transport):
 *   tcp (default) BulkSend over TCP NewReno: like RoCE's RC it is a reliable, ACKed,
 *       windowed transport that retransmits what the queue drops, so every flow delivers
 *       SIZE bytes and a round ends as qpace's does. Matched to the incast's RC: segment
 *       = MTU of payload; receive and send buffers = WINDOW packets (rxe's 128 packet
 *       window); minimum RTO = the incast's local ACK timeout (4.096 us << 14 = 67 ms);
 *       writes of 64 KiB (the incast's WRITE size); no SACK (NewReno's own recovery,
 *       RFC 6582; RC has none either, it goes back N). ns-3's defaults otherwise
 *       (initial window 10, delayed ACK every 2 segments, timestamps: 54 B of headers a
 *       packet against RoCE's 58). With ns-3's default SACK on, a 16 -> 1 round at
 *       1 Gb/s with 512 KiB of buffer takes 4.3 s instead of 36 ms: one flow mends one
 *       hole per RTO.
 *   udp OnOff at line rate (payload rate = RATE x MTU/(MTU + 30): the NIC is exactly
 *       full), no ACKs and no retransmission: RoCE's rate-paced sending without the
 *       reliability. ns-3's cheapest sender: a round ends when every packet was received
 *       or dropped, and a flow that lost a packet is not done.
 *
 * Counted: a packet-hop is a completed transmission on any link (PhyTxEnd of every
 * device: host -> switch, switch -> host, data, ACKs and handshakes alike); drops are the
 * device queues' and the traffic-control layers'. Wall and CPU time are measured around
 * Simulator::Run only (building the topology is not timed).
 */
#include <ctime>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <string>
#include <unordered_map>
#include <vector>

#include <ns3/applications-module.h>
#include <ns3/core-module.h>
#include <ns3/internet-module.h>
#include <ns3/network-module.h>
#include <ns3/point-to-point-module.h>
#include <ns3/traffic-control-module.h>

extern "C" {
#include "qpace/out.h"
#include "qpace/units.h"
#include "ns3_opts.h"
}

using namespace ns3;

namespace {

const uint16_t kPort = 5001;
const uint64_t kGapNs = 2 * QP_NS_PER_MS;         /* between rounds, as qpace's incast */
const uint64_t kRtoNs = 4096ull << 14;            /* the incast's RC local ACK timeout */
const uint32_t kWriteBytes = 64 * 1024;           /* the incast's WRITE size */
const uint32_t kUdpOverhead = 2 + 20 + 8;         /* PPP + IPv4 + UDP */
const uint32_t kMtuSlack = 80;                    /* IP MTU above the payload: headers */
const uint32_t kHostQueuePkts = 1000000;          /* host NIC queues: never the limit */

/* Connect a trace sink; a source name ns-3 does not know is a bug here, not a zero. */
template <typename T, typename Cb>
void Trace(Ptr<T> obj, const char* source, const Cb& cb)
{
    if (!obj->TraceConnectWithoutContext(source, cb)) {
        fprintf(stderr, "ns3-incast: no trace source %s on %s\n", source,
                obj->GetInstanceTypeId().GetName().c_str());
        exit(1);
    }
}

class Incast {
  public:
    explicit Incast(const ns3_conf& c) : c_(c) {}
    void Build();
    int Run(struct qp_out* o);

  private:
    void StartRound();
    void EndRound();
    void OnTimeout();
    void OnRx(Ptr<const Packet> p, const Address& from);
    void OnTxEnd(Ptr<const Packet>) { hops_++; }
    void OnSwitchDrop(Ptr<const Packet>) { drops_++; Dropped(); }
    void OnHostDrop(Ptr<const Packet>) { host_drops_++; Dropped(); }
    void Dropped();
    void OnQueue(uint32_t, uint32_t bytes) { max_queue_ = std::max<uint64_t>(max_queue_, bytes); }
    bool Udp() const { return c_.transport == NS3_UDP; }
    void CheckUdpRoundEnd();

    const ns3_conf& c_;
    NodeContainer hosts_;              /* 0: the receiver; 1..N: the senders */
    NodeContainer senders_;            /* hosts 1..N */
    Ptr<Node> switch_;
    Ipv4Address rx_addr_;
    std::unordered_map<uint32_t, unsigned> sender_of_;   /* IPv4 -> sender index */
    std::vector<uint64_t> got_;        /* this round, per sender: bytes (tcp), packets (udp) */
    uint64_t pkts_per_flow_ = 0;       /* udp */
    uint64_t round_rx_ = 0, round_drops_ = 0, round_done_ = 0;
    uint64_t rounds_done_ = 0, flows_done_ = 0, delivered_ = 0;
    uint64_t hops_ = 0, drops_ = 0, host_drops_ = 0, max_queue_ = 0;
    uint64_t round_start_ns_ = 0, rounds_ns_ = 0;
    bool round_on_ = false, timed_out_ = false;
    EventId timeout_;
};

void Incast::Build()
{
    Config::SetDefault("ns3::TcpL4Protocol::SocketType", TypeIdValue(TcpNewReno::GetTypeId()));
    Config::SetDefault("ns3::TcpSocket::SegmentSize", UintegerValue(c_.mtu));
    Config::SetDefault("ns3::TcpSocket::SndBufSize", UintegerValue(c_.window * c_.mtu));
    Config::SetDefault("ns3::TcpSocket::RcvBufSize", UintegerValue(c_.window * c_.mtu));
    Config::SetDefault("ns3::TcpSocketBase::MinRto", TimeValue(NanoSeconds(kRtoNs)));
    Config::SetDefault("ns3::TcpSocketBase::Sack", BooleanValue(false));
    RngSeedManager::SetSeed(static_cast<uint32_t>(c_.seed));

    hosts_.Create(c_.senders + 1);
    switch_ = CreateObject<Node>();
    InternetStackHelper stack;
    stack.Install(hosts_);
    stack.Install(switch_);

    PointToPointHelper p2p;
    p2p.SetDeviceAttribute("DataRate", DataRateValue(DataRate(c_.rate)));
    p2p.SetDeviceAttribute("Mtu", UintegerValue(c_.mtu + kMtuSlack));
    p2p.SetChannelAttribute("Delay", TimeValue(NanoSeconds(c_.delay)));
    Ipv4AddressHelper addr("10.0.0.0", "255.255.255.252");
    TrafficControlHelper tch;
    auto swdrop = MakeCallback(&Incast::OnSwitchDrop, this);
    auto hostdrop = MakeCallback(&Incast::OnHostDrop, this);

    for (uint32_t i = 0; i <= c_.senders; i++) {
        NetDeviceContainer d = p2p.Install(hosts_.Get(i), switch_);   /* 0: host, 1: switch */
        Ipv4InterfaceContainer ifs = addr.Assign(d);
        addr.NewNetwork();
        tch.Uninstall(d);
        auto host = DynamicCast<PointToPointNetDevice>(d.Get(0));
        auto sw = DynamicCast<PointToPointNetDevice>(d.Get(1));
        host->GetQueue()->SetMaxSize(QueueSize(QueueSizeUnit::PACKETS, kHostQueuePkts));
        sw->GetQueue()->SetMaxSize(QueueSize(QueueSizeUnit::BYTES, c_.buffer));
        for (auto dev : { host, sw })
            Trace(dev, "PhyTxEnd", MakeCallback(&Incast::OnTxEnd, this));
        Trace(host->GetQueue(), "Drop", hostdrop);
        Trace(sw->GetQueue(), "Drop", swdrop);
        if (i == 0) {
            rx_addr_ = ifs.GetAddress(0);
            Trace(sw->GetQueue(), "BytesInQueue", MakeCallback(&Incast::OnQueue, this));
        } else {
            sender_of_[ifs.GetAddress(0).Get()] = i - 1;
            senders_.Add(hosts_.Get(i));
        }
    }
    /* With no queue disc, a packet meeting a stopped device queue is dropped here. */
    for (uint32_t i = 0; i <= c_.senders; i++)
        Trace(hosts_.Get(i)->GetObject<TrafficControlLayer>(), "TcDrop", hostdrop);
    Trace(switch_->GetObject<TrafficControlLayer>(), "TcDrop", swdrop);
    Ipv4GlobalRoutingHelper::PopulateRoutingTables();

    const char* factory = Udp() ? "ns3::UdpSocketFactory" : "ns3::TcpSocketFactory";
    PacketSinkHelper sink(factory, InetSocketAddress(Ipv4Address::GetAny(), kPort));
    ApplicationContainer s = sink.Install(hosts_.Get(0));
    Trace(s.Get(0), "Rx", MakeCallback(&Incast::OnRx, this));
    got_.assign(c_.senders, 0);
    pkts_per_flow_ = (c_.size + c_.mtu - 1) / c_.mtu;
    Simulator::Schedule(Seconds(0), &Incast::StartRound, this);
}

/* New flows, one per sender, all at once (the apps start when added: now). */
void Incast::StartRound()
{
    std::fill(got_.begin(), got_.end(), 0);
    round_rx_ = round_drops_ = round_done_ = 0;
    round_start_ns_ = Simulator::Now().GetNanoSeconds();
    round_on_ = true;
    InetSocketAddress to(rx_addr_, kPort);
    ApplicationContainer apps;
    if (Udp()) {
        OnOffHelper h("ns3::UdpSocketFactory", to);
        h.SetConstantRate(DataRate(c_.rate * c_.mtu / (c_.mtu + kUdpOverhead)), c_.mtu);
        h.SetAttribute("MaxBytes", UintegerValue(c_.size));
        apps = h.Install(senders_);
    } else {
        BulkSendHelper h("ns3::TcpSocketFactory", to);
        h.SetAttribute("MaxBytes", UintegerValue(c_.size));
        h.SetAttribute("SendSize", UintegerValue(kWriteBytes));
        apps = h.Install(senders_);
    }
    timeout_ = Simulator::Schedule(NanoSeconds(c_.timeout), &Incast::OnTimeout, this);
}

void Incast::EndRound()
{
    timeout_.Cancel();
    round_on_ = false;
    rounds_ns_ += Simulator::Now().GetNanoSeconds() - round_start_ns_;
    flows_done_ += round_done_;
    if (++rounds_done_ < c_.rounds)
        Simulator::Schedule(NanoSeconds(kGapNs), &Incast::StartRound, this);
    else
        Simulator::Stop();
}

void Incast::OnTimeout()
{
    timed_out_ = true;
    round_on_ = false;
    flows_done_ += round_done_;
    Simulator::Stop();
}

void Incast::OnRx(Ptr<const Packet> p, const Address& from)
{
    auto it = sender_of_.find(InetSocketAddress::ConvertFrom(from).GetIpv4().Get());
    if (!round_on_ || it == sender_of_.end())
        return;
    uint64_t& got = got_[it->second];
    uint64_t before = got;
    delivered_ += p->GetSize();
    if (Udp()) {
        got++;
        round_rx_++;
        if (got == pkts_per_flow_)
            round_done_++;
        CheckUdpRoundEnd();
        return;
    }
    got += p->GetSize();
    if (before < c_.size && got >= c_.size && ++round_done_ == c_.senders)
        EndRound();
}

void Incast::Dropped()
{
    if (round_on_ && Udp()) {
        round_drops_++;
        CheckUdpRoundEnd();
    }
}

/* UDP has no end of its own: the round is over when every packet sent has arrived or
 * been dropped. */
void Incast::CheckUdpRoundEnd()
{
    if (round_rx_ + round_drops_ == pkts_per_flow_ * c_.senders)
        EndRound();
}

double CpuSeconds()
{
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

int Incast::Run(struct qp_out* o)
{
    double cpu0 = CpuSeconds();
    qp_time_ns t0 = qp_now_ns();
    Simulator::Run();
    qp_time_ns wall_ns = qp_now_ns() - t0;
    double cpu_s = CpuSeconds() - cpu0;
    double sim_s = Simulator::Now().GetSeconds(), wall_s = static_cast<double>(wall_ns) * 1e-9;
    uint64_t events = Simulator::GetEventCount();
    Simulator::Destroy();

    qp_out_obj(o, nullptr);
    qp_out_str(o, "simulator", "ns-3 " NS3_VERSION_STR);
    qp_out_str(o, "transport", Udp() ? "udp-onoff" : "tcp-newreno");
    qp_out_u64(o, "senders", c_.senders);
    qp_out_u64(o, "bytes_per_sender", c_.size);
    qp_out_u64(o, "rounds", c_.rounds);
    qp_out_u64(o, "rounds_done", rounds_done_);
    qp_out_rate(o, "link_bps", c_.rate);
    qp_out_u64(o, "mtu_bytes", c_.mtu);
    qp_out_u64(o, "buffer_bytes", c_.buffer);
    qp_out_time(o, "delay_ns", c_.delay);
    qp_out_u64(o, "window", c_.window);
    qp_out_u64(o, "flows", c_.senders * (rounds_done_ + (timed_out_ ? 1 : 0)));
    qp_out_u64(o, "flows_done", flows_done_);
    qp_out_double(o, "goodput_bps",
                  rounds_ns_ ? static_cast<double>(delivered_) * 8e9 / static_cast<double>(rounds_ns_) : 0,
                  "%.0f");
    qp_out_u64(o, "drops", drops_);
    qp_out_u64(o, "host_drops", host_drops_);
    qp_out_u64(o, "max_queue_bytes", max_queue_);
    qp_out_u64(o, "events", events);
    qp_out_u64(o, "packet_hops", hops_);
    qp_out_double(o, "sim_s", sim_s, "%.6f");
    qp_out_double(o, "wall_s", wall_s, "%.6f");
    qp_out_double(o, "cpu_s", cpu_s, "%.6f");
    qp_out_double(o, "packet_hops_per_s", wall_s > 0 ? static_cast<double>(hops_) / wall_s : 0,
                  "%.0f");
    qp_out_double(o, "ns_per_packet_hop", hops_ ? static_cast<double>(wall_ns) / static_cast<double>(hops_) : 0,
                  "%.1f");
    qp_out_bool(o, "timed_out", timed_out_);
    qp_out_end(o);
    if (timed_out_) {
        char t[32];
        fprintf(stderr, "ns3-incast: round %llu did not finish within --timeout %s of "
                "simulated time (%llu of %llu flows done)\n",
                static_cast<unsigned long long>(rounds_done_ + 1),
                qp_fmt_time(c_.timeout, t, sizeof(t)),
                static_cast<unsigned long long>(round_done_),
                static_cast<unsigned long long>(c_.senders));
        return 1;
    }
    return 0;
}

}  // namespace

int main(int argc, char** argv)
{
    struct ns3_conf c;
    int rc = ns3_conf_parse(&c, argc, argv);
    if (rc)
        return rc < 0 ? 2 : 0;
    struct qp_out o;
    qp_out_init(&o, stdout, c.json ? QP_OUT_JSON : QP_OUT_TEXT);
    Incast x(c);
    x.Build();
    return x.Run(&o);
}
