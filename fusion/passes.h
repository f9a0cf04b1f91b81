// The graph passes, one per file, each named verb-object. Each rewrites `graph` in place, keeps
// it verifiable, and appends one line per rewrite to report.details (report.changes counts
// them). The legality rules of each pass are stated at the top of its file.
#pragma once

#include "fusion/pass_manager.h"
#include "runtime/graph.h"

namespace edgefuse::fusion {

// Removes Identity nodes (imported Dropout included) by rewiring their consumers.
Status eliminate_identity(Graph& graph, PassReport& report);
// Evaluates nodes whose inputs are all constant, and Shape nodes of statically known shapes.
Status fold_constants(Graph& graph, PassReport& report);
// Merges consecutive Transposes, drops identity ones, and folds 2-D ones into Gemm's transA/transB.
Status fold_transposes(Graph& graph, PassReport& report);
// Lets a Concat that takes all pieces of a Split, in order, take the Split's input instead.
Status fold_split_into_concat(Graph& graph, PassReport& report);
// Lets a Transpose that is a Concat's only reader take the Concat's inputs, each permuted into its block.
Status fold_concat_into_transpose(Graph& graph, PassReport& report);
// Folds the Focus stem (four phase Slices + Concat on channels) into the following Conv's weights.
Status fold_space_to_depth_into_conv(Graph& graph, PassReport& report);
// Scales a Conv's constant weight and bias by the BatchNormalization that follows it.
Status fold_batchnorm_into_conv(Graph& graph, PassReport& report);
// Scales and shifts a Conv's constant weight and bias by a Mul, Add, Sub or Div by a per-channel constant.
Status fold_scale_shift_into_conv(Graph& graph, PassReport& report);
// Adds a same-shaped tensor to a Conv's output inside the Conv (the fused residual).
Status fuse_conv_add(Graph& graph, PassReport& report);
// Cuts a Concat's inputs instead of its output where only cuts read it (pieces of whole inputs are those inputs).
Status push_slices_into_concat_inputs(Graph& graph, PassReport& report);
// Applies an activation of Conv outputs assembled by Concats and Reshapes to each Conv output instead.
Status push_activations_into_concat_inputs(Graph& graph, PassReport& report);
// Turns a Softmax over channels read only by a 1x1 Conv to one channel (a distribution head) into a SoftmaxExpectation.
Status fuse_softmax_expectation(Graph& graph, PassReport& report);
// Computes a SoftmaxExpectation of a tensor joined on its last axis on each joined piece, and joins the results.
Status push_expectations_into_concat_inputs(Graph& graph, PassReport& report);
// Records a following activation (SiLU included) on the Conv node as its epilogue.
Status fuse_conv_activation(Graph& graph, PassReport& report);
// Adds a same-shaped tensor to an activated Conv's output inside the Conv, after the activation.
Status fuse_conv_activation_add(Graph& graph, PassReport& report);
// Lets a Conv's residual that is its input padded with zero channels be that input alone.
Status trim_zero_padded_residuals(Graph& graph, PassReport& report);
// Lets a 1x1 Conv's residual that is a 2 x 2, stride 2 MaxPool's output be read through the pool.
Status fold_max_pool_into_conv_residual(Graph& graph, PassReport& report);
// Lets a 1x1 Conv whose output only a Transpose to channels-last reads write that Transpose's output.
Status fold_transpose_into_conv_output(Graph& graph, PassReport& report);
// fuse_conv_activation for the Convs that now write channels-last, whose activation followed the Transpose.
Status fuse_conv_activation_after_transposes(Graph& graph, PassReport& report);
// Turns pieces of a tensor (Slices or a Split), pointwise ops on some and a Concat of all on the
// same axis into windowed PointwiseChains over the tensor.
Status fold_slices_into_windowed_chains(Graph& graph, PassReport& report);
// Fuses runs of pointwise ops (each reading the previous output) into one PointwiseChain node.
Status fuse_pointwise_chains(Graph& graph, PassReport& report);
// Chains parallel same-padded stride-1 MaxPools of one input (SPP) so each reads the smaller one.
Status cascade_spp_maxpools(Graph& graph, PassReport& report);

}  // namespace edgefuse::fusion
