// fuse_pointwise_chains: a run of pointwise ops, each reading the previous one's output, becomes
// one PointwiseChain node (runtime/ops/pointwise_chain.h) that reads each input once and writes
// only the last output: Sigmoid -> Mul(2) -> Sub(0.5) -> Add(grid) -> Mul(stride), a decoder
// head's typical tail, is one pass over the tensor instead of five. Runs after the Conv epilogue
// passes, so it takes what they leave: pointwise ops after non-Conv producers, and chains longer
// than one activation.
//
// What a chain may hold (the legality rules) is fusion/pointwise_chain_finder.h's; a chain of a
// single node is left alone. The fused node takes the last node's place (all its inputs exist by
// then; the intermediate values it drops had no other reader) and its name.
#include <optional>
#include <sstream>
#include <vector>

#include "fusion/graph_edit.h"
#include "fusion/passes.h"
#include "fusion/pointwise_chain_finder.h"

namespace edgefuse::fusion {

Status fuse_pointwise_chains(Graph& graph, PassReport& report) {
  std::vector<PointwiseChainFinder::Chain> chains;
  {
    const PointwiseChainFinder finder(graph);
    std::vector<uint8_t> taken(graph.nodes().size(), 0);
    for (size_t n = 0; n < graph.nodes().size(); ++n) {
      if (taken[n] != 0) continue;
      std::optional<PointwiseChainFinder::Chain> chain = finder.chain_from(static_cast<NodeId>(n), taken, 2);
      if (!chain) continue;
      for (NodeId member : chain->members) taken[static_cast<size_t>(member)] = 1;
      chains.push_back(std::move(*chain));
    }
  }
  std::vector<bool> dead(graph.nodes().size(), false);
  for (const PointwiseChainFinder::Chain& chain : chains) {
    std::ostringstream names;
    for (NodeId member : chain.members) names << " " << graph.describe_node(member);
    const NodeId last = chain.members.back();
    Node fused;
    fused.op = OpKind::kPointwiseChain;
    fused.name = graph.node(last).name;
    fused.inputs = chain.inputs;
    fused.outputs = {chain.output};
    set_pointwise_chain(fused.attrs, chain.program);
    for (NodeId member : chain.members) {
      dead[static_cast<size_t>(member)] = member != last;
      if (member != last) graph.value(graph.node(member).outputs[0]).producer = -1;
    }
    graph.nodes()[static_cast<size_t>(last)] = std::move(fused);
    ++report.changes;
    report.details.push_back(make_message("fused", names.str(), " into one PointwiseChain of ",
                                          chain.program.steps.size(), " steps and ", chain.inputs.size(), " input",
                                          chain.inputs.size() == 1 ? "" : "s"));
  }
  if (report.changes > 0) compact(graph, dead);
  return Status::ok();
}

}  // namespace edgefuse::fusion
