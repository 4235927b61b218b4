; kstrata-tvm source target=llvm shape=symbolic
; kstrata-plan: {"inputs":["x","p_weight"],"outputs":["lv_2"],"single":true,"steps":[{"func":"power","args":["x"],"outs":["lv_1"]},{"func":"fused_mean_add_tir_rsqrt_multiply_multiply1","args":["lv_1","x","p_weight"],"outs":["lv_2"]}],"buffers":{"lv_1":[["s77","s27"],"float32"],"lv_2":[["s77","s27"],"float32"]},"aliases":{},"consts":{},"syms":[[0,0,"s77"],[0,1,"s27"],[1,0,"s27"]]}
; ModuleID = 'TVMMod'
source_filename = "TVMMod"
target datalayout = "e-m:e-p270:32:32-p271:32:32-p272:64:64-i64:64-i128:128-f80:128-n8:16:32:64-S128"
target triple = "x86_64-conda-linux-gnu"

@.str = private constant [10 x i8] c"TypeError\00", align 1
@.str.1 = private constant [10 x i8] c"Expected \00", align 1
@.str.2 = private constant [2 x i8] c"4\00", align 1
@.str.3 = private constant [11 x i8] c" arguments\00", align 1
@.str.4 = private constant [19 x i8] c" when calling:\0A  `\00", align 1
@.str.5 = private constant [199 x i8] c"fused_mean_add_tir_rsqrt_multiply_multiply1(lv: Tensor([s77, s27], float32), x: Tensor([s77, s27], float32), p_weight: Tensor([s27], float32), T_multiply_intermediate_1: Tensor([s77, s27], float32))\00", align 1
@.str.6 = private constant [2 x i8] c"`\00", align 1
@.str.7 = private constant [21 x i8] c"args pointer is NULL\00", align 1
@.str.8 = private constant [30 x i8] c"Mismatched type on argument #\00", align 1
@.str.9 = private constant [2 x i8] c"0\00", align 1
@.str.10 = private constant [15 x i8] c"`,\0A  expected \00", align 1
@.str.11 = private constant [7 x i8] c"Tensor\00", align 1
@.str.12 = private constant [2 x i8] c"1\00", align 1
@.str.13 = private constant [2 x i8] c"2\00", align 1
@.str.14 = private constant [2 x i8] c"3\00", align 1
@.str.15 = private constant [11 x i8] c"ValueError\00", align 1
@.str.16 = private constant [12 x i8] c"Mismatched \00", align 1
@.str.17 = private constant [3 x i8] c"lv\00", align 1
@.str.18 = private constant [20 x i8] c".ndim on argument #\00", align 1
@.str.19 = private constant [21 x i8] c".dtype on argument #\00", align 1
@.str.20 = private constant [8 x i8] c"float32\00", align 1
@.str.21 = private constant [27 x i8] c".device_type on argument #\00", align 1
@.str.22 = private constant [4 x i8] c"cpu\00", align 1
@.str.23 = private constant [2 x i8] c"x\00", align 1
@.str.24 = private constant [9 x i8] c"p_weight\00", align 1
@.str.25 = private constant [26 x i8] c"T_multiply_intermediate_1\00", align 1
@.str.26 = private constant [23 x i8] c".strides on argument #\00", align 1
@.str.27 = private constant [34 x i8] c"`,\0A  expected to be compact array\00", align 1
@.str.28 = private constant [36 x i8] c" data pointer is NULL on argument #\00", align 1
@.str.29 = private constant [36 x i8] c"`,\0A  expected non-NULL data pointer\00", align 1
@.str.30 = private constant [11 x i8] c"x.shape[0]\00", align 1
@.str.31 = private constant [15 x i8] c" on argument #\00", align 1
@.str.32 = private constant [24 x i8] c"`,\0A  expected to match \00", align 1
@.str.33 = private constant [12 x i8] c"lv.shape[0]\00", align 1
@.str.34 = private constant [11 x i8] c"x.shape[1]\00", align 1
@.str.35 = private constant [12 x i8] c"lv.shape[1]\00", align 1
@.str.36 = private constant [12 x i8] c"x.device_id\00", align 1
@.str.37 = private constant [13 x i8] c"lv.device_id\00", align 1
@.str.38 = private constant [18 x i8] c"p_weight.shape[0]\00", align 1
@.str.39 = private constant [19 x i8] c"p_weight.device_id\00", align 1
@.str.40 = private constant [35 x i8] c"T_multiply_intermediate_1.shape[0]\00", align 1
@.str.41 = private constant [35 x i8] c"T_multiply_intermediate_1.shape[1]\00", align 1
@.str.42 = private constant [36 x i8] c"T_multiply_intermediate_1.device_id\00", align 1
@.str.43 = private constant [9 x i8] c"Invalid \00", align 1
@.str.44 = private constant [15 x i8] c"lv.byte_offset\00", align 1
@.str.45 = private constant [14 x i8] c"x.byte_offset\00", align 1
@.str.46 = private constant [21 x i8] c"p_weight.byte_offset\00", align 1
@.str.47 = private constant [38 x i8] c"T_multiply_intermediate_1.byte_offset\00", align 1
@__TVMBackendAllocWorkspace = linkonce dllexport local_unnamed_addr global ptr null, align 8
@__TVMBackendFreeWorkspace = linkonce dllexport local_unnamed_addr global ptr null, align 8
@.str.48 = private constant [76 x i8] c"power(x: Tensor([s77, s27], float32), T_power: Tensor([s77, s27], float32))\00", align 1
@.str.49 = private constant [8 x i8] c"T_power\00", align 1
@.str.50 = private constant [17 x i8] c"T_power.shape[0]\00", align 1
@.str.51 = private constant [17 x i8] c"T_power.shape[1]\00", align 1
@.str.52 = private constant [18 x i8] c"T_power.device_id\00", align 1
@.str.53 = private constant [20 x i8] c"T_power.byte_offset\00", align 1
@llvm.global_ctors = appending global [0 x { i32, ptr, ptr }] zeroinitializer

define dllexport range(i32 -1, 1) i32 @__tvm_ffi_fused_mean_add_tir_rsqrt_multiply_multiply1(ptr noalias readnone captures(none) %self_handle, ptr noalias readonly captures(address_is_null) %args, i32 %num_args, ptr noalias readnone captures(none) %result) local_unnamed_addr #0 !dbg !5 {
entry:
    #dbg_value(ptr %self_handle, !11, !DIExpression(), !15)
    #dbg_value(ptr %args, !12, !DIExpression(), !15)
    #dbg_value(i32 %num_args, !13, !DIExpression(), !15)
    #dbg_value(ptr %result, !14, !DIExpression(), !15)
  %0 = icmp eq i32 %num_args, 4, !dbg !15
  br i1 %0, label %assert_end, label %assert_fail, !dbg !15, !prof !16

common.ret:                                       ; preds = %assert_end99, %assert_fail98, %assert_fail96, %assert_fail94, %assert_fail92, %assert_fail90, %assert_fail88, %assert_fail86, %assert_fail82, %assert_fail80, %assert_fail78, %assert_fail76, %assert_fail74, %assert_fail70, %assert_fail68, %assert_fail66, %assert_fail64, %assert_fail60, %assert_fail58, %assert_fail56, %assert_fail54, %assert_fail50, %assert_fail48, %assert_fail46, %assert_fail44, %assert_fail42, %assert_fail40, %assert_fail38, %assert_fail36, %assert_fail34, %assert_fail32, %assert_fail30, %assert_fail28, %assert_fail26, %assert_fail24, %assert_fail22, %assert_fail20, %assert_fail15, %assert_fail10, %assert_fail5, %assert_fail3, %assert_fail1, %assert_fail
  %common.ret.op = phi i32 [ -1, %assert_fail ], [ -1, %assert_fail1 ], [ -1, %assert_fail3 ], [ -1, %assert_fail5 ], [ -1, %assert_fail10 ], [ -1, %assert_fail15 ], [ -1, %assert_fail20 ], [ -1, %assert_fail22 ], [ -1, %assert_fail24 ], [ -1, %assert_fail26 ], [ -1, %assert_fail28 ], [ -1, %assert_fail30 ], [ -1, %assert_fail32 ], [ -1, %assert_fail34 ], [ -1, %assert_fail36 ], [ -1, %assert_fail38 ], [ -1, %assert_fail40 ], [ -1, %assert_fail42 ], [ -1, %assert_fail44 ], [ -1, %assert_fail46 ], [ -1, %assert_fail48 ], [ -1, %assert_fail50 ], [ -1, %assert_fail54 ], [ -1, %assert_fail56 ], [ -1, %assert_fail58 ], [ -1, %assert_fail60 ], [ -1, %assert_fail64 ], [ -1, %assert_fail66 ], [ -1, %assert_fail68 ], [ -1, %assert_fail70 ], [ -1, %assert_fail74 ], [ -1, %assert_fail76 ], [ -1, %assert_fail78 ], [ -1, %assert_fail80 ], [ -1, %assert_fail82 ], [ -1, %assert_fail86 ], [ -1, %assert_fail88 ], [ -1, %assert_fail90 ], [ -1, %assert_fail92 ], [ -1, %assert_fail94 ], [ -1, %assert_fail96 ], [ -1, %assert_fail98 ], [ %192, %assert_end99 ]
  ret i32 %common.ret.op, !dbg !15

assert_fail:                                      ; preds = %entry
  tail call fastcc void @__tvm_set_raised_6(ptr nonnull @.str, i32 6, ptr nonnull @.str.1, ptr nonnull @.str.2, ptr nonnull @.str.3, ptr nonnull @.str.4, ptr nonnull @.str.5, ptr nonnull @.str.6), !dbg !15
  br label %common.ret, !dbg !15

assert_end:                                       ; preds = %entry
  %.not = icmp eq ptr %args, null, !dbg !15
  br i1 %.not, label %assert_fail1, label %assert_end2, !dbg !15, !prof !17

assert_fail1:                                     ; preds = %assert_end
  tail call fastcc void @__tvm_set_raised_6(ptr nonnull @.str, i32 4, ptr nonnull @.str.7, ptr nonnull @.str.4, ptr nonnull @.str.5, ptr nonnull @.str.6, ptr null, ptr null), !dbg !15
  br label %common.ret, !dbg !15

assert_end2:                                      ; preds = %assert_end
  %lv.type_index = load i32, ptr %args, align 4, !dbg !15
    #dbg_value(i32 %lv.type_index, !18, !DIExpression(), !15)
    #dbg_value(i32 %lv.type_index, !18, !DIExpression(), !15)
  %lv.type_index.fr = freeze i32 %lv.type_index, !dbg !15
  %1 = icmp sgt i32 %lv.type_index.fr, 63, !dbg !15
  br i1 %1, label %assert_end4, label %switch.early.test, !dbg !15

switch.early.test:                                ; preds = %assert_end2
  switch i32 %lv.type_index.fr, label %assert_fail3 [
    i32 0, label %if_else
    i32 4, label %if_else
    i32 7, label %if_else
  ], !dbg !15, !prof !19

assert_fail3:                                     ; preds = %switch.early.test
  tail call fastcc void @__tvm_set_raised_6(ptr nonnull @.str, i32 6, ptr nonnull @.str.8, ptr nonnull @.str.9, ptr nonnull @.str.4, ptr nonnull @.str.5, ptr nonnull @.str.10, ptr nonnull @.str.11), !dbg !15
  br label %common.ret, !dbg !15

assert_end4:                                      ; preds = %assert_end2
  %2 = icmp eq i32 %lv.type_index.fr, 70, !dbg !15
  br i1 %2, label %if_then, label %if_else, !dbg !15

if_then:                                          ; preds = %assert_end4
  %3 = getelementptr inbounds nuw i8, ptr %args, i64 8, !dbg !15
  %4 = load ptr, ptr %3, align 8, !dbg !15
  %5 = getelementptr inbounds nuw i8, ptr %4, i64 24, !dbg !15
  br label %if_end, !dbg !15

if_else:                                          ; preds = %switch.early.test, %switch.early.test, %switch.early.test, %assert_end4
  %6 = getelementptr inbounds nuw i8, ptr %args, i64 8, !dbg !15
  %7 = load ptr, ptr %6, align 8, !dbg !15
  br label %if_end, !dbg !15

if_end:                                           ; preds = %if_else, %if_then
  %lv.handle = phi ptr [ %5, %if_then ], [ %7, %if_else ], !dbg !15
    #dbg_declare(ptr %lv.handle, !20, !DIExpression(), !15)
    #dbg_declare(ptr %lv.handle, !20, !DIExpression(), !15)
  %8 = getelementptr inbounds nuw i8, ptr %args, i64 16, !dbg !15
  %x.type_index = load i32, ptr %8, align 4, !dbg !15
    #dbg_value(i32 %x.type_index, !21, !DIExpression(), !15)
    #dbg_value(i32 %x.type_index, !21, !DIExpression(), !15)
  %x.type_index.fr = freeze i32 %x.type_index, !dbg !15
  %9 = icmp sgt i32 %x.type_index.fr, 63, !dbg !15
  br i1 %9, label %assert_end6, label %switch.early.test100, !dbg !15

switch.early.test100:                             ; preds = %if_end
  switch i32 %x.type_index.fr, label %assert_fail5 [
    i32 0, label %if_else8
    i32 4, label %if_else8
    i32 7, label %if_else8
  ], !dbg !15, !prof !19

assert_fail5:                                     ; preds = %switch.early.test100
  tail call fastcc void @__tvm_set_raised_6(ptr nonnull @.str, i32 6, ptr nonnull @.str.8, ptr nonnull @.str.12, ptr nonnull @.str.4, ptr nonnull @.str.5, ptr nonnull @.str.10, ptr nonnull @.str.11), !dbg !15
  br label %common.ret, !dbg !15

assert_end6:                                      ; preds = %if_end
  %10 = icmp eq i32 %x.type_index.fr, 70, !dbg !15
  br i1 %10, label %if_then7, label %if_else8, !dbg !15

if_then7:                                         ; preds = %assert_end6
  %11 = getelementptr inbounds nuw i8, ptr %args, i64 24, !dbg !15
  %12 = load ptr, ptr %11, align 8, !dbg !15
  %13 = getelementptr inbounds nuw i8, ptr %12, i64 24, !dbg !15
  br label %if_end9, !dbg !15

if_else8:                                         ; preds = %switch.early.test100, %switch.early.test100, %switch.early.test100, %assert_end6
  %14 = getelementptr inbounds nuw i8, ptr %args, i64 24, !dbg !15
  %15 = load ptr, ptr %14, align 8, !dbg !15
  br label %if_end9, !dbg !15

if_end9:                                          ; preds = %if_else8, %if_then7
  %x.handle = phi ptr [ %13, %if_then7 ], [ %15, %if_else8 ], !dbg !15
    #dbg_declare(ptr %x.handle, !22, !DIExpression(), !15)
    #dbg_declare(ptr %x.handle, !22, !DIExpression(), !15)
  %16 = getelementptr inbounds nuw i8, ptr %args, i64 32, !dbg !15
  %p_weight.type_index = load i32, ptr %16, align 4, !dbg !15
    #dbg_value(i32 %p_weight.type_index, !23, !DIExpression(), !15)
    #dbg_value(i32 %p_weight.type_index, !23, !DIExpression(), !15)
  %p_weight.type_index.fr = freeze i32 %p_weight.type_index, !dbg !15
  %17 = icmp sgt i32 %p_weight.type_index.fr, 63, !dbg !15
  br i1 %17, label %assert_end11, label %switch.early.test101, !dbg !15

switch.early.test101:                             ; preds = %if_end9
  switch i32 %p_weight.type_index.fr, label %assert_fail10 [
    i32 0, label %if_else13
    i32 4, label %if_else13
    i32 7, label %if_else13
  ], !dbg !15, !prof !19

assert_fail10:                                    ; preds = %switch.early.test101
  tail call fastcc void @__tvm_set_raised_6(ptr nonnull @.str, i32 6, ptr nonnull @.str.8, ptr nonnull @.str.13, ptr nonnull @.str.4, ptr nonnull @.str.5, ptr nonnull @.str.10, ptr nonnull @.str.11), !dbg !15
  br label %common.ret, !dbg !15

assert_end11:                                     ; preds = %if_end9
  %18 = icmp eq i32 %p_weight.type_index.fr, 70, !dbg !15
  br i1 %18, label %if_then12, label %if_else13, !dbg !15

if_then12:                                        ; preds = %assert_end11
  %19 = getelementptr inbounds nuw i8, ptr %args, i64 40, !dbg !15
  %20 = load ptr, ptr %19, align 8, !dbg !15
  %21 = getelementptr inbounds nuw i8, ptr %20, i64 24, !dbg !15
  br label %if_end14, !dbg !15

if_else13:                                        ; preds = %switch.early.test101, %switch.early.test101, %switch.early.test101, %assert_end11
  %22 = getelementptr inbounds nuw i8, ptr %args, i64 40, !dbg !15
  %23 = load ptr, ptr %22, align 8, !dbg !15
  br label %if_end14, !dbg !15

if_end14:                                         ; preds = %if_else13, %if_then12
  %p_weight.handle = phi ptr [ %21, %if_then12 ], [ %23, %if_else13 ], !dbg !15
    #dbg_declare(ptr %p_weight.handle, !24, !DIExpression(), !15)
    #dbg_declare(ptr %p_weight.handle, !24, !DIExpression(), !15)
  %24 = getelementptr inbounds nuw i8, ptr %args, i64 48, !dbg !15
  %T_multiply_intermediate_1.type_index = load i32, ptr %24, align 4, !dbg !15
    #dbg_value(i32 %T_multiply_intermediate_1.type_index, !25, !DIExpression(), !15)
    #dbg_value(i32 %T_multiply_intermediate_1.type_index, !25, !DIExpression(), !15)
  %T_multiply_intermediate_1.type_index.fr = freeze i32 %T_multiply_intermediate_1.type_index, !dbg !15
  %25 = icmp sgt i32 %T_multiply_intermediate_1.type_index.fr, 63, !dbg !15
  br i1 %25, label %assert_end16, label %switch.early.test102, !dbg !15

switch.early.test102:                             ; preds = %if_end14
  switch i32 %T_multiply_intermediate_1.type_index.fr, label %assert_fail15 [
    i32 0, label %if_else18
    i32 4, label %if_else18
    i32 7, label %if_else18
  ], !dbg !15, !prof !19

assert_fail15:                                    ; preds = %switch.early.test102
  tail call fastcc void @__tvm_set_raised_6(ptr nonnull @.str, i32 6, ptr nonnull @.str.8, ptr nonnull @.str.14, ptr nonnull @.str.4, ptr nonnull @.str.5, ptr nonnull @.str.10, ptr nonnull @.str.11), !dbg !15
  br label %common.ret, !dbg !15

assert_end16:                                     ; preds = %if_end14
  %26 = icmp eq i32 %T_multiply_intermediate_1.type_index.fr, 70, !dbg !15
  br i1 %26, label %if_then17, label %if_else18, !dbg !15

if_then17:                                        ; preds = %assert_end16
  %27 = getelementptr inbounds nuw i8, ptr %args, i64 56, !dbg !15
  %28 = load ptr, ptr %27, align 8, !dbg !15
  %29 = getelementptr inbounds nuw i8, ptr %28, i64 24, !dbg !15
  br label %if_end19, !dbg !15

if_else18:                                        ; preds = %switch.early.test102, %switch.early.test102, %switch.early.test102, %assert_end16
  %30 = getelementptr inbounds nuw i8, ptr %args, i64 56, !dbg !15
  %31 = load ptr, ptr %30, align 8, !dbg !15
  br label %if_end19, !dbg !15

if_end19:                                         ; preds = %if_else18, %if_then17
  %T_multiply_intermediate_1.handle = phi ptr [ %29, %if_then17 ], [ %31, %if_else18 ], !dbg !15
    #dbg_declare(ptr %T_multiply_intermediate_1.handle, !26, !DIExpression(), !15)
    #dbg_declare(ptr %T_multiply_intermediate_1.handle, !26, !DIExpression(), !15)
  %.not103 = icmp eq ptr %lv.handle, null, !dbg !15
  br i1 %.not103, label %assert_fail20, label %assert_end21, !dbg !15, !prof !17

assert_fail20:                                    ; preds = %if_end19
  tail call fastcc void @__tvm_set_raised_6(ptr nonnull @.str, i32 6, ptr nonnull @.str.8, ptr nonnull @.str.9, ptr nonnull @.str.4, ptr nonnull @.str.5, ptr nonnull @.str.10, ptr nonnull @.str.11), !dbg !15
  br label %common.ret, !dbg !15

assert_end21:                                     ; preds = %if_end19
  %32 = getelementptr inbounds nuw i8, ptr %lv.handle, i64 16, !dbg !15
  %33 = load i32, ptr %32, align 4, !dbg !15
  %34 = icmp eq i32 %33, 2, !dbg !15
  br i1 %34, label %assert_end23, label %assert_fail22, !dbg !15, !prof !16

assert_fail22:                                    ; preds = %assert_end21
  tail call fastcc void @__tvm_set_raised_12(ptr nonnull @.str.15, i32 8, ptr nonnull @.str.16, ptr nonnull @.str.17, ptr nonnull @.str.18, ptr nonnull @.str.9, ptr nonnull @.str.5, ptr nonnull @.str.10, ptr nonnull @.str.13), !dbg !15
  br label %common.ret, !dbg !15

assert_end23:                                     ; preds = %assert_end21
  %35 = getelementptr inbounds nuw i8, ptr %lv.handle, i64 22, !dbg !15
  %36 = load i16, ptr %35, align 2, !dbg !15
  %37 = icmp eq i16 %36, 1, !dbg !15
  %38 = getelementptr inbounds nuw i8, ptr %lv.handle, i64 21, !dbg !15
  %39 = load i8, ptr %38, align 1, !dbg !15
  %40 = icmp eq i8 %39, 32, !dbg !15
  %41 = getelementptr inbounds nuw i8, ptr %lv.handle, i64 20, !dbg !15
  %42 = load i8, ptr %41, align 2, !dbg !15
  %43 = icmp eq i8 %42, 2, !dbg !15
  %44 = and i1 %40, %43, !dbg !15
  %45 = and i1 %37, %44, !dbg !15
  br i1 %45, label %assert_end25, label %assert_fail24, !dbg !15, !prof !16

assert_fail24:                                    ; preds = %assert_end23
  tail call fastcc void @__tvm_set_raised_12(ptr nonnull @.str, i32 8, ptr nonnull @.str.16, ptr nonnull @.str.17, ptr nonnull @.str.19, ptr nonnull @.str.9, ptr nonnull @.str.5, ptr nonnull @.str.10, ptr nonnull @.str.20), !dbg !15
  br label %common.ret, !dbg !15

assert_end25:                                     ; preds = %assert_end23
  %46 = getelementptr inbounds nuw i8, ptr %lv.handle, i64 24, !dbg !15
  %fused_mean_add_tir_rsqrt_multiply_multiply1.lv_shape = load ptr, ptr %46, align 8, !dbg !15
    #dbg_declare(ptr %fused_mean_add_tir_rsqrt_multiply_multiply1.lv_shape, !27, !DIExpression(), !15)
    #dbg_declare(ptr %fused_mean_add_tir_rsqrt_multiply_multiply1.lv_shape, !27, !DIExpression(), !15)
  %s77 = load i64, ptr %fused_mean_add_tir_rsqrt_multiply_multiply1.lv_shape, align 8, !dbg !15
    #dbg_value(i64 %s77, !30, !DIExpression(), !15)
    #dbg_value(i64 %s77, !30, !DIExpression(), !15)
  %47 = getelementptr inbounds nuw i8, ptr %fused_mean_add_tir_rsqrt_multiply_multiply1.lv_shape, i64 8, !dbg !15
  %s27 = load i64, ptr %47, align 8, !dbg !15
    #dbg_value(i64 %s27, !31, !DIExpression(), !15)
    #dbg_value(i64 %s27, !31, !DIExpression(), !15)
  %48 = getelementptr inbounds nuw i8, ptr %lv.handle, i64 32, !dbg !15
  %fused_mean_add_tir_rsqrt_multiply_multiply1.lv_strides = load ptr, ptr %48, align 8, !dbg !15
    #dbg_declare(ptr %fused_mean_add_tir_rsqrt_multiply_multiply1.lv_strides, !32, !DIExpression(), !15)
    #dbg_declare(ptr %fused_mean_add_tir_rsqrt_multiply_multiply1.lv_strides, !32, !DIExpression(), !15)
  %49 = getelementptr inbounds nuw i8, ptr %lv.handle, i64 8, !dbg !15
  %50 = load i32, ptr %49, align 8, !dbg !15
  %51 = icmp eq i32 %50, 1, !dbg !15
  br i1 %51, label %assert_end27, label %assert_fail26, !dbg !15, !prof !16

assert_fail26:                                    ; preds = %assert_end25
  tail call fastcc void @__tvm_set_raised_12(ptr nonnull @.str.15, i32 8, ptr nonnull @.str.16, ptr nonnull @.str.17, ptr nonnull @.str.21, ptr nonnull @.str.9, ptr nonnull @.str.5, ptr nonnull @.str.10, ptr nonnull @.str.22), !dbg !15
  br label %common.ret, !dbg !15

assert_end27:                                     ; preds = %assert_end25
  %52 = getelementptr inbounds nuw i8, ptr %lv.handle, i64 12, !dbg !15
  %dev_id = load i32, ptr %52, align 4, !dbg !15
    #dbg_value(i32 %dev_id, !33, !DIExpression(), !15)
    #dbg_value(i32 %dev_id, !33, !DIExpression(), !15)
  %.not104 = icmp eq ptr %x.handle, null, !dbg !15
  br i1 %.not104, label %assert_fail28, label %assert_end29, !dbg !15, !prof !17

assert_fail28:                                    ; preds = %assert_end27
  tail call fastcc void @__tvm_set_raised_6(ptr nonnull @.str, i32 6, ptr nonnull @.str.8, ptr nonnull @.str.12, ptr nonnull @.str.4, ptr nonnull @.str.5, ptr nonnull @.str.10, ptr nonnull @.str.11), !dbg !15
  br label %common.ret, !dbg !15

assert_end29:                                     ; preds = %assert_end27
  %53 = getelementptr inbounds nuw i8, ptr %x.handle, i64 16, !dbg !15
  %54 = load i32, ptr %53, align 4, !dbg !15
  %55 = icmp eq i32 %54, 2, !dbg !15
  br i1 %55, label %assert_end31, label %assert_fail30, !dbg !15, !prof !16

assert_fail30:                                    ; preds = %assert_end29
  tail call fastcc void @__tvm_set_raised_12(ptr nonnull @.str.15, i32 8, ptr nonnull @.str.16, ptr nonnull @.str.23, ptr nonnull @.str.18, ptr nonnull @.str.12, ptr nonnull @.str.5, ptr nonnull @.str.10, ptr nonnull @.str.13), !dbg !15
  br label %common.ret, !dbg !15

assert_end31:                                     ; preds = %assert_end29
  %56 = getelementptr inbounds nuw i8, ptr %x.handle, i64 22, !dbg !15
  %57 = load i16, ptr %56, align 2, !dbg !15
  %58 = icmp eq i16 %57, 1, !dbg !15
  %59 = getelementptr inbounds nuw i8, ptr %x.handle, i64 21, !dbg !15
  %60 = load i8, ptr %59, align 1, !dbg !15
  %61 = icmp eq i8 %60, 32, !dbg !15
  %62 = getelementptr inbounds nuw i8, ptr %x.handle, i64 20, !dbg !15
  %63 = load i8, ptr %62, align 2, !dbg !15
  %64 = icmp eq i8 %63, 2, !dbg !15
  %65 = and i1 %61, %64, !dbg !15
  %66 = and i1 %58, %65, !dbg !15
  br i1 %66, label %assert_end33, label %assert_fail32, !dbg !15, !prof !16

assert_fail32:                                    ; preds = %assert_end31
  tail call fastcc void @__tvm_set_raised_12(ptr nonnull @.str, i32 8, ptr nonnull @.str.16, ptr nonnull @.str.23, ptr nonnull @.str.19, ptr nonnull @.str.12, ptr nonnull @.str.5, ptr nonnull @.str.10, ptr nonnull @.str.20), !dbg !15
  br label %common.ret, !dbg !15

assert_end33:                                     ; preds = %assert_end31
  %67 = getelementptr inbounds nuw i8, ptr %x.handle, i64 24, !dbg !15
  %fused_mean_add_tir_rsqrt_multiply_multiply1.x_shape = load ptr, ptr %67, align 8, !dbg !15
    #dbg_declare(ptr %fused_mean_add_tir_rsqrt_multiply_multiply1.x_shape, !34, !DIExpression(), !15)
    #dbg_declare(ptr %fused_mean_add_tir_rsqrt_multiply_multiply1.x_shape, !34, !DIExpression(), !15)
  %68 = getelementptr inbounds nuw i8, ptr %x.handle, i64 32, !dbg !15
  %fused_mean_add_tir_rsqrt_multiply_multiply1.x_strides = load ptr, ptr %68, align 8, !dbg !15
    #dbg_declare(ptr %fused_mean_add_tir_rsqrt_multiply_multiply1.x_strides, !35, !DIExpression(), !15)
    #dbg_declare(ptr %fused_mean_add_tir_rsqrt_multiply_multiply1.x_strides, !35, !DIExpression(), !15)
  %69 = getelementptr inbounds nuw i8, ptr %x.handle, i64 8, !dbg !15
  %70 = load i32, ptr %69, align 8, !dbg !15
  %71 = icmp eq i32 %70, 1, !dbg !15
  br i1 %71, label %assert_end35, label %assert_fail34, !dbg !15, !prof !16

assert_fail34:                                    ; preds = %assert_end33
  tail call fastcc void @__tvm_set_raised_12(ptr nonnull @.str.15, i32 8, ptr nonnull @.str.16, ptr nonnull @.str.23, ptr nonnull @.str.21, ptr nonnull @.str.12, ptr nonnull @.str.5, ptr nonnull @.str.10, ptr nonnull @.str.22), !dbg !15
  br label %common.ret, !dbg !15

assert_end35:                                     ; preds = %assert_end33
  %.not105 = icmp eq ptr %p_weight.handle, null, !dbg !15
  br i1 %.not105, label %assert_fail36, label %assert_end37, !dbg !15, !prof !17

assert_fail36:                                    ; preds = %assert_end35
  tail call fastcc void @__tvm_set_raised_6(ptr nonnull @.str, i32 6, ptr nonnull @.str.8, ptr nonnull @.str.13, ptr nonnull @.str.4, ptr nonnull @.str.5, ptr nonnull @.str.10, ptr nonnull @.str.11), !dbg !15
  br label %common.ret, !dbg !15

assert_end37:                                     ; preds = %assert_end35
  %72 = getelementptr inbounds nuw i8, ptr %p_weight.handle, i64 16, !dbg !15
  %73 = load i32, ptr %72, align 4, !dbg !15
  %74 = icmp eq i32 %73, 1, !dbg !15
  br i1 %74, label %assert_end39, label %assert_fail38, !dbg !15, !prof !16

assert_fail38:                                    ; preds = %assert_end37
  tail call fastcc void @__tvm_set_raised_12(ptr nonnull @.str.15, i32 8, ptr nonnull @.str.16, ptr nonnull @.str.24, ptr nonnull @.str.18, ptr nonnull @.str.13, ptr nonnull @.str.5, ptr nonnull @.str.10, ptr nonnull @.str.12), !dbg !15
  br label %common.ret, !dbg !15

assert_end39:                                     ; preds = %assert_end37
  %75 = getelementptr inbounds nuw i8, ptr %p_weight.handle, i64 22, !dbg !15
  %76 = load i16, ptr %75, align 2, !dbg !15
  %77 = icmp eq i16 %76, 1, !dbg !15
  %78 = getelementptr inbounds nuw i8, ptr %p_weight.handle, i64 21, !dbg !15
  %79 = load i8, ptr %78, align 1, !dbg !15
  %80 = icmp eq i8 %79, 32, !dbg !15
  %81 = getelementptr inbounds nuw i8, ptr %p_weight.handle, i64 20, !dbg !15
  %82 = load i8, ptr %81, align 2, !dbg !15
  %83 = icmp eq i8 %82, 2, !dbg !15
  %84 = and i1 %80, %83, !dbg !15
  %85 = and i1 %77, %84, !dbg !15
  br i1 %85, label %assert_end41, label %assert_fail40, !dbg !15, !prof !16

assert_fail40:                                    ; preds = %assert_end39
  tail call fastcc void @__tvm_set_raised_12(ptr nonnull @.str, i32 8, ptr nonnull @.str.16, ptr nonnull @.str.24, ptr nonnull @.str.19, ptr nonnull @.str.13, ptr nonnull @.str.5, ptr nonnull @.str.10, ptr nonnull @.str.20), !dbg !15
  br label %common.ret, !dbg !15

assert_end41:                                     ; preds = %assert_end39
  %86 = getelementptr inbounds nuw i8, ptr %p_weight.handle, i64 24, !dbg !15
  %fused_mean_add_tir_rsqrt_multiply_multiply1.p_weight_shape = load ptr, ptr %86, align 8, !dbg !15
    #dbg_declare(ptr %fused_mean_add_tir_rsqrt_multiply_multiply1.p_weight_shape, !36, !DIExpression(), !15)
    #dbg_declare(ptr %fused_mean_add_tir_rsqrt_multiply_multiply1.p_weight_shape, !36, !DIExpression(), !15)
  %87 = getelementptr inbounds nuw i8, ptr %p_weight.handle, i64 32, !dbg !15
  %fused_mean_add_tir_rsqrt_multiply_multiply1.p_weight_strides = load ptr, ptr %87, align 8, !dbg !15
    #dbg_declare(ptr %fused_mean_add_tir_rsqrt_multiply_multiply1.p_weight_strides, !37, !DIExpression(), !15)
    #dbg_declare(ptr %fused_mean_add_tir_rsqrt_multiply_multiply1.p_weight_strides, !37, !DIExpression(), !15)
  %88 = getelementptr inbounds nuw i8, ptr %p_weight.handle, i64 8, !dbg !15
  %89 = load i32, ptr %88, align 8, !dbg !15
  %90 = icmp eq i32 %89, 1, !dbg !15
  br i1 %90, label %assert_end43, label %assert_fail42, !dbg !15, !prof !16

assert_fail42:                                    ; preds = %assert_end41
  tail call fastcc void @__tvm_set_raised_12(ptr nonnull @.str.15, i32 8, ptr nonnull @.str.16, ptr nonnull @.str.24, ptr nonnull @.str.21, ptr nonnull @.str.13, ptr nonnull @.str.5, ptr nonnull @.str.10, ptr nonnull @.str.22), !dbg !15
  br label %common.ret, !dbg !15

assert_end43:                                     ; preds = %assert_end41
  %.not106 = icmp eq ptr %T_multiply_intermediate_1.handle, null, !dbg !15
  br i1 %.not106, label %assert_fail44, label %assert_end45, !dbg !15, !prof !17

assert_fail44:                                    ; preds = %assert_end43
  tail call fastcc void @__tvm_set_raised_6(ptr nonnull @.str, i32 6, ptr nonnull @.str.8, ptr nonnull @.str.14, ptr nonnull @.str.4, ptr nonnull @.str.5, ptr nonnull @.str.10, ptr nonnull @.str.11), !dbg !15
  br label %common.ret, !dbg !15

assert_end45:                                     ; preds = %assert_end43
  %91 = getelementptr inbounds nuw i8, ptr %T_multiply_intermediate_1.handle, i64 16, !dbg !15
  %92 = load i32, ptr %91, align 4, !dbg !15
  %93 = icmp eq i32 %92, 2, !dbg !15
  br i1 %93, label %assert_end47, label %assert_fail46, !dbg !15, !prof !16

assert_fail46:                                    ; preds = %assert_end45
  tail call fastcc void @__tvm_set_raised_12(ptr nonnull @.str.15, i32 8, ptr nonnull @.str.16, ptr nonnull @.str.25, ptr nonnull @.str.18, ptr nonnull @.str.14, ptr nonnull @.str.5, ptr nonnull @.str.10, ptr nonnull @.str.13), !dbg !15
  br label %common.ret, !dbg !15

assert_end47:                                     ; preds = %assert_end45
  %94 = getelementptr inbounds nuw i8, ptr %T_multiply_intermediate_1.handle, i64 22, !dbg !15
  %95 = load i16, ptr %94, align 2, !dbg !15
  %96 = icmp eq i16 %95, 1, !dbg !15
  %97 = getelementptr inbounds nuw i8, ptr %T_multiply_intermediate_1.handle, i64 21, !dbg !15
  %98 = load i8, ptr %97, align 1, !dbg !15
  %99 = icmp eq i8 %98, 32, !dbg !15
  %100 = getelementptr inbounds nuw i8, ptr %T_multiply_intermediate_1.handle, i64 20, !dbg !15
  %101 = load i8, ptr %100, align 2, !dbg !15
  %102 = icmp eq i8 %101, 2, !dbg !15
  %103 = and i1 %99, %102, !dbg !15
  %104 = and i1 %96, %103, !dbg !15
  br i1 %104, label %assert_end49, label %assert_fail48, !dbg !15, !prof !16

assert_fail48:                                    ; preds = %assert_end47
  tail call fastcc void @__tvm_set_raised_12(ptr nonnull @.str, i32 8, ptr nonnull @.str.16, ptr nonnull @.str.25, ptr nonnull @.str.19, ptr nonnull @.str.14, ptr nonnull @.str.5, ptr nonnull @.str.10, ptr nonnull @.str.20), !dbg !15
  br label %common.ret, !dbg !15

assert_end49:                                     ; preds = %assert_end47
  %105 = getelementptr inbounds nuw i8, ptr %T_multiply_intermediate_1.handle, i64 24, !dbg !15
  %fused_mean_add_tir_rsqrt_multiply_multiply1.T_multiply_intermediate_1_shape = load ptr, ptr %105, align 8, !dbg !15
    #dbg_declare(ptr %fused_mean_add_tir_rsqrt_multiply_multiply1.T_multiply_intermediate_1_shape, !38, !DIExpression(), !15)
    #dbg_declare(ptr %fused_mean_add_tir_rsqrt_multiply_multiply1.T_multiply_intermediate_1_shape, !38, !DIExpression(), !15)
  %106 = getelementptr inbounds nuw i8, ptr %T_multiply_intermediate_1.handle, i64 32, !dbg !15
  %fused_mean_add_tir_rsqrt_multiply_multiply1.T_multiply_intermediate_1_strides = load ptr, ptr %106, align 8, !dbg !15
    #dbg_declare(ptr %fused_mean_add_tir_rsqrt_multiply_multiply1.T_multiply_intermediate_1_strides, !39, !DIExpression(), !15)
    #dbg_declare(ptr %fused_mean_add_tir_rsqrt_multiply_multiply1.T_multiply_intermediate_1_strides, !39, !DIExpression(), !15)
  %107 = getelementptr inbounds nuw i8, ptr %T_multiply_intermediate_1.handle, i64 8, !dbg !15
  %108 = load i32, ptr %107, align 8, !dbg !15
  %109 = icmp eq i32 %108, 1, !dbg !15
  br i1 %109, label %assert_end51, label %assert_fail50, !dbg !15, !prof !16

assert_fail50:                                    ; preds = %assert_end49
  tail call fastcc void @__tvm_set_raised_12(ptr nonnull @.str.15, i32 8, ptr nonnull @.str.16, ptr nonnull @.str.25, ptr nonnull @.str.21, ptr nonnull @.str.14, ptr nonnull @.str.5, ptr nonnull @.str.10, ptr nonnull @.str.22), !dbg !15
  br label %common.ret, !dbg !15

assert_end51:                                     ; preds = %assert_end49
  %.not107 = icmp eq ptr %fused_mean_add_tir_rsqrt_multiply_multiply1.lv_strides, null, !dbg !15
  br i1 %.not107, label %if_end53, label %if_then52, !dbg !15, !prof !17

if_then52:                                        ; preds = %assert_end51
  %110 = load i64, ptr %fused_mean_add_tir_rsqrt_multiply_multiply1.lv_strides, align 8, !dbg !15
  %111 = icmp eq i64 %s27, %110, !dbg !15
  %112 = icmp eq i64 %s77, 1, !dbg !15
  %113 = or i1 %112, %111, !dbg !15
  %114 = getelementptr inbounds nuw i8, ptr %fused_mean_add_tir_rsqrt_multiply_multiply1.lv_strides, i64 8, !dbg !15
  %115 = load i64, ptr %114, align 8, !dbg !15
  %116 = icmp eq i64 %115, 1, !dbg !15
  %117 = icmp eq i64 %s27, 1, !dbg !15
  %118 = or i1 %117, %116, !dbg !15
  %119 = and i1 %113, %118, !dbg !15
  br i1 %119, label %if_end53, label %assert_fail54, !dbg !15, !prof !16

if_end53:                                         ; preds = %if_then52, %assert_end51
  %120 = load ptr, ptr %lv.handle, align 8, !dbg !15
  %121 = icmp ne ptr %120, null, !dbg !15
  %122 = mul nsw i64 %s27, %s77, !dbg !15
  %123 = icmp eq i64 %122, 0, !dbg !15
  %124 = or i1 %123, %121, !dbg !15
  br i1 %124, label %assert_end57, label %assert_fail56, !dbg !15, !prof !16

assert_fail54:                                    ; preds = %if_then52
  tail call fastcc void @__tvm_set_raised_12(ptr nonnull @.str.15, i32 7, ptr nonnull @.str.16, ptr nonnull @.str.17, ptr nonnull @.str.26, ptr nonnull @.str.9, ptr nonnull @.str.5, ptr nonnull @.str.27, ptr null), !dbg !15
  br label %common.ret, !dbg !15

assert_fail56:                                    ; preds = %if_end53
  tail call fastcc void @__tvm_set_raised_6(ptr nonnull @.str.15, i32 6, ptr nonnull @.str.17, ptr nonnull @.str.28, ptr nonnull @.str.9, ptr nonnull @.str.4, ptr nonnull @.str.5, ptr nonnull @.str.29), !dbg !15
  br label %common.ret, !dbg !15

assert_end57:                                     ; preds = %if_end53
  %125 = load i64, ptr %fused_mean_add_tir_rsqrt_multiply_multiply1.x_shape, align 8, !dbg !15
  %126 = icmp eq i64 %s77, %125, !dbg !15
  br i1 %126, label %assert_end59, label %assert_fail58, !dbg !15, !prof !16

assert_fail58:                                    ; preds = %assert_end57
  tail call fastcc void @__tvm_set_raised_12(ptr nonnull @.str.15, i32 8, ptr nonnull @.str.16, ptr nonnull @.str.30, ptr nonnull @.str.31, ptr nonnull @.str.12, ptr nonnull @.str.5, ptr nonnull @.str.32, ptr nonnull @.str.33), !dbg !15
  br label %common.ret, !dbg !15

assert_end59:                                     ; preds = %assert_end57
  %127 = getelementptr inbounds nuw i8, ptr %fused_mean_add_tir_rsqrt_multiply_multiply1.x_shape, i64 8, !dbg !15
  %128 = load i64, ptr %127, align 8, !dbg !15
  %129 = icmp eq i64 %s27, %128, !dbg !15
  br i1 %129, label %assert_end61, label %assert_fail60, !dbg !15, !prof !16

assert_fail60:                                    ; preds = %assert_end59
  tail call fastcc void @__tvm_set_raised_12(ptr nonnull @.str.15, i32 8, ptr nonnull @.str.16, ptr nonnull @.str.34, ptr nonnull @.str.31, ptr nonnull @.str.12, ptr nonnull @.str.5, ptr nonnull @.str.32, ptr nonnull @.str.35), !dbg !15
  br label %common.ret, !dbg !15

assert_end61:                                     ; preds = %assert_end59
  %.not108 = icmp eq ptr %fused_mean_add_tir_rsqrt_multiply_multiply1.x_strides, null, !dbg !15
  br i1 %.not108, label %if_end63, label %if_then62, !dbg !15, !prof !17

if_then62:                                        ; preds = %assert_end61
  %130 = load i64, ptr %fused_mean_add_tir_rsqrt_multiply_multiply1.x_strides, align 8, !dbg !15
  %131 = icmp eq i64 %s27, %130, !dbg !15
  %132 = icmp eq i64 %s77, 1, !dbg !15
  %133 = or i1 %132, %131, !dbg !15
  %134 = getelementptr inbounds nuw i8, ptr %fused_mean_add_tir_rsqrt_multiply_multiply1.x_strides, i64 8, !dbg !15
  %135 = load i64, ptr %134, align 8, !dbg !15
  %136 = icmp eq i64 %135, 1, !dbg !15
  %137 = icmp eq i64 %s27, 1, !dbg !15
  %138 = or i1 %137, %136, !dbg !15
  %139 = and i1 %133, %138, !dbg !15
  br i1 %139, label %if_end63, label %assert_fail64, !dbg !15, !prof !16

if_end63:                                         ; preds = %if_then62, %assert_end61
  %140 = getelementptr inbounds nuw i8, ptr %x.handle, i64 12, !dbg !15
  %141 = load i32, ptr %140, align 4, !dbg !15
  %142 = icmp eq i32 %dev_id, %141, !dbg !15
  br i1 %142, label %assert_end67, label %assert_fail66, !dbg !15, !prof !16

assert_fail64:                                    ; preds = %if_then62
  tail call fastcc void @__tvm_set_raised_12(ptr nonnull @.str.15, i32 7, ptr nonnull @.str.16, ptr nonnull @.str.23, ptr nonnull @.str.26, ptr nonnull @.str.12, ptr nonnull @.str.5, ptr nonnull @.str.27, ptr null), !dbg !15
  br label %common.ret, !dbg !15

assert_fail66:                                    ; preds = %if_end63
  tail call fastcc void @__tvm_set_raised_12(ptr nonnull @.str.15, i32 8, ptr nonnull @.str.16, ptr nonnull @.str.36, ptr nonnull @.str.31, ptr nonnull @.str.12, ptr nonnull @.str.5, ptr nonnull @.str.32, ptr nonnull @.str.37), !dbg !15
  br label %common.ret, !dbg !15

assert_end67:                                     ; preds = %if_end63
  %143 = load ptr, ptr %x.handle, align 8, !dbg !15
  %144 = icmp ne ptr %143, null, !dbg !15
  %145 = or i1 %123, %144, !dbg !15
  br i1 %145, label %assert_end69, label %assert_fail68, !dbg !15, !prof !16

assert_fail68:                                    ; preds = %assert_end67
  tail call fastcc void @__tvm_set_raised_6(ptr nonnull @.str.15, i32 6, ptr nonnull @.str.23, ptr nonnull @.str.28, ptr nonnull @.str.12, ptr nonnull @.str.4, ptr nonnull @.str.5, ptr nonnull @.str.29), !dbg !15
  br label %common.ret, !dbg !15

assert_end69:                                     ; preds = %assert_end67
  %146 = load i64, ptr %fused_mean_add_tir_rsqrt_multiply_multiply1.p_weight_shape, align 8, !dbg !15
  %147 = icmp eq i64 %s27, %146, !dbg !15
  br i1 %147, label %assert_end71, label %assert_fail70, !dbg !15, !prof !16

assert_fail70:                                    ; preds = %assert_end69
  tail call fastcc void @__tvm_set_raised_12(ptr nonnull @.str.15, i32 8, ptr nonnull @.str.16, ptr nonnull @.str.38, ptr nonnull @.str.31, ptr nonnull @.str.13, ptr nonnull @.str.5, ptr nonnull @.str.32, ptr nonnull @.str.35), !dbg !15
  br label %common.ret, !dbg !15

assert_end71:                                     ; preds = %assert_end69
  %.not109 = icmp eq ptr %fused_mean_add_tir_rsqrt_multiply_multiply1.p_weight_strides, null, !dbg !15
  br i1 %.not109, label %if_end73, label %if_then72, !dbg !15, !prof !17

if_then72:                                        ; preds = %assert_end71
  %148 = load i64, ptr %fused_mean_add_tir_rsqrt_multiply_multiply1.p_weight_strides, align 8, !dbg !15
  %149 = icmp eq i64 %148, 1, !dbg !15
  %150 = icmp eq i64 %s27, 1, !dbg !15
  %151 = or i1 %150, %149, !dbg !15
  br i1 %151, label %if_end73, label %assert_fail74, !dbg !15, !prof !16

if_end73:                                         ; preds = %if_then72, %assert_end71
  %152 = getelementptr inbounds nuw i8, ptr %p_weight.handle, i64 12, !dbg !15
  %153 = load i32, ptr %152, align 4, !dbg !15
  %154 = icmp eq i32 %dev_id, %153, !dbg !15
  br i1 %154, label %assert_end77, label %assert_fail76, !dbg !15, !prof !16

assert_fail74:                                    ; preds = %if_then72
  tail call fastcc void @__tvm_set_raised_12(ptr nonnull @.str.15, i32 7, ptr nonnull @.str.16, ptr nonnull @.str.24, ptr nonnull @.str.26, ptr nonnull @.str.13, ptr nonnull @.str.5, ptr nonnull @.str.27, ptr null), !dbg !15
  br label %common.ret, !dbg !15

assert_fail76:                                    ; preds = %if_end73
  tail call fastcc void @__tvm_set_raised_12(ptr nonnull @.str.15, i32 8, ptr nonnull @.str.16, ptr nonnull @.str.39, ptr nonnull @.str.31, ptr nonnull @.str.13, ptr nonnull @.str.5, ptr nonnull @.str.32, ptr nonnull @.str.37), !dbg !15
  br label %common.ret, !dbg !15

assert_end77:                                     ; preds = %if_end73
  %155 = load ptr, ptr %p_weight.handle, align 8, !dbg !15
  %156 = icmp ne ptr %155, null, !dbg !15
  %157 = icmp eq i64 %s27, 0, !dbg !15
  %158 = or i1 %157, %156, !dbg !15
  br i1 %158, label %assert_end79, label %assert_fail78, !dbg !15, !prof !16

assert_fail78:                                    ; preds = %assert_end77
  tail call fastcc void @__tvm_set_raised_6(ptr nonnull @.str.15, i32 6, ptr nonnull @.str.24, ptr nonnull @.str.28, ptr nonnull @.str.13, ptr nonnull @.str.4, ptr nonnull @.str.5, ptr nonnull @.str.29), !dbg !15
  br label %common.ret, !dbg !15

assert_end79:                                     ; preds = %assert_end77
  %159 = load i64, ptr %fused_mean_add_tir_rsqrt_multiply_multiply1.T_multiply_intermediate_1_shape, align 8, !dbg !15
  %160 = icmp eq i64 %s77, %159, !dbg !15
  br i1 %160, label %assert_end81, label %assert_fail80, !dbg !15, !prof !16

assert_fail80:                                    ; preds = %assert_end79
  tail call fastcc void @__tvm_set_raised_12(ptr nonnull @.str.15, i32 8, ptr nonnull @.str.16, ptr nonnull @.str.40, ptr nonnull @.str.31, ptr nonnull @.str.14, ptr nonnull @.str.5, ptr nonnull @.str.32, ptr nonnull @.str.33), !dbg !15
  br label %common.ret, !dbg !15

assert_end81:                                     ; preds = %assert_end79
  %161 = getelementptr inbounds nuw i8, ptr %fused_mean_add_tir_rsqrt_multiply_multiply1.T_multiply_intermediate_1_shape, i64 8, !dbg !15
  %162 = load i64, ptr %161, align 8, !dbg !15
  %163 = icmp eq i64 %s27, %162, !dbg !15
  br i1 %163, label %assert_end83, label %assert_fail82, !dbg !15, !prof !16

assert_fail82:                                    ; preds = %assert_end81
  tail call fastcc void @__tvm_set_raised_12(ptr nonnull @.str.15, i32 8, ptr nonnull @.str.16, ptr nonnull @.str.41, ptr nonnull @.str.31, ptr nonnull @.str.14, ptr nonnull @.str.5, ptr nonnull @.str.32, ptr nonnull @.str.35), !dbg !15
  br label %common.ret, !dbg !15

assert_end83:                                     ; preds = %assert_end81
  %.not110 = icmp eq ptr %fused_mean_add_tir_rsqrt_multiply_multiply1.T_multiply_intermediate_1_strides, null, !dbg !15
  br i1 %.not110, label %if_end85, label %if_then84, !dbg !15, !prof !17

if_then84:                                        ; preds = %assert_end83
  %164 = load i64, ptr %fused_mean_add_tir_rsqrt_multiply_multiply1.T_multiply_intermediate_1_strides, align 8, !dbg !15
  %165 = icmp eq i64 %s27, %164, !dbg !15
  %166 = icmp eq i64 %s77, 1, !dbg !15
  %167 = or i1 %166, %165, !dbg !15
  %168 = getelementptr inbounds nuw i8, ptr %fused_mean_add_tir_rsqrt_multiply_multiply1.T_multiply_intermediate_1_strides, i64 8, !dbg !15
  %169 = load i64, ptr %168, align 8, !dbg !15
  %170 = icmp eq i64 %169, 1, !dbg !15
  %171 = icmp eq i64 %s27, 1, !dbg !15
  %172 = or i1 %171, %170, !dbg !15
  %173 = and i1 %167, %172, !dbg !15
  br i1 %173, label %if_end85, label %assert_fail86, !dbg !15, !prof !16

if_end85:                                         ; preds = %if_then84, %assert_end83
  %174 = getelementptr inbounds nuw i8, ptr %T_multiply_intermediate_1.handle, i64 12, !dbg !15
  %175 = load i32, ptr %174, align 4, !dbg !15
  %176 = icmp eq i32 %dev_id, %175, !dbg !15
  br i1 %176, label %assert_end89, label %assert_fail88, !dbg !15, !prof !16

assert_fail86:                                    ; preds = %if_then84
  tail call fastcc void @__tvm_set_raised_12(ptr nonnull @.str.15, i32 7, ptr nonnull @.str.16, ptr nonnull @.str.25, ptr nonnull @.str.26, ptr nonnull @.str.14, ptr nonnull @.str.5, ptr nonnull @.str.27, ptr null), !dbg !15
  br label %common.ret, !dbg !15

assert_fail88:                                    ; preds = %if_end85
  tail call fastcc void @__tvm_set_raised_12(ptr nonnull @.str.15, i32 8, ptr nonnull @.str.16, ptr nonnull @.str.42, ptr nonnull @.str.31, ptr nonnull @.str.14, ptr nonnull @.str.5, ptr nonnull @.str.32, ptr nonnull @.str.37), !dbg !15
  br label %common.ret, !dbg !15

assert_end89:                                     ; preds = %if_end85
  %177 = load ptr, ptr %T_multiply_intermediate_1.handle, align 8, !dbg !15
  %178 = icmp ne ptr %177, null, !dbg !15
  %179 = or i1 %123, %178, !dbg !15
  br i1 %179, label %assert_end91, label %assert_fail90, !dbg !15, !prof !16

assert_fail90:                                    ; preds = %assert_end89
  tail call fastcc void @__tvm_set_raised_6(ptr nonnull @.str.15, i32 6, ptr nonnull @.str.25, ptr nonnull @.str.28, ptr nonnull @.str.14, ptr nonnull @.str.4, ptr nonnull @.str.5, ptr nonnull @.str.29), !dbg !15
  br label %common.ret, !dbg !15

assert_end91:                                     ; preds = %assert_end89
  %180 = getelementptr inbounds nuw i8, ptr %lv.handle, i64 40, !dbg !15
  %181 = load i64, ptr %180, align 8, !dbg !15
  %182 = icmp eq i64 %181, 0, !dbg !15
  br i1 %182, label %assert_end93, label %assert_fail92, !dbg !15, !prof !16

assert_fail92:                                    ; preds = %assert_end91
  tail call fastcc void @__tvm_set_raised_12(ptr nonnull @.str.15, i32 8, ptr nonnull @.str.43, ptr nonnull @.str.44, ptr nonnull @.str.31, ptr nonnull @.str.9, ptr nonnull @.str.5, ptr nonnull @.str.10, ptr nonnull @.str.9), !dbg !15
  br label %common.ret, !dbg !15

assert_end93:                                     ; preds = %assert_end91
  %183 = getelementptr inbounds nuw i8, ptr %x.handle, i64 40, !dbg !15
  %184 = load i64, ptr %183, align 8, !dbg !15
  %185 = icmp eq i64 %184, 0, !dbg !15
  br i1 %185, label %assert_end95, label %assert_fail94, !dbg !15, !prof !16

assert_fail94:                                    ; preds = %assert_end93
  tail call fastcc void @__tvm_set_raised_12(ptr nonnull @.str.15, i32 8, ptr nonnull @.str.43, ptr nonnull @.str.45, ptr nonnull @.str.31, ptr nonnull @.str.12, ptr nonnull @.str.5, ptr nonnull @.str.10, ptr nonnull @.str.9), !dbg !15
  br label %common.ret, !dbg !15

assert_end95:                                     ; preds = %assert_end93
  %186 = getelementptr inbounds nuw i8, ptr %p_weight.handle, i64 40, !dbg !15
  %187 = load i64, ptr %186, align 8, !dbg !15
  %188 = icmp eq i64 %187, 0, !dbg !15
  br i1 %188, label %assert_end97, label %assert_fail96, !dbg !15, !prof !16

assert_fail96:                                    ; preds = %assert_end95
  tail call fastcc void @__tvm_set_raised_12(ptr nonnull @.str.15, i32 8, ptr nonnull @.str.43, ptr nonnull @.str.46, ptr nonnull @.str.31, ptr nonnull @.str.13, ptr nonnull @.str.5, ptr nonnull @.str.10, ptr nonnull @.str.9), !dbg !15
  br label %common.ret, !dbg !15

assert_end97:                                     ; preds = %assert_end95
  %189 = getelementptr inbounds nuw i8, ptr %T_multiply_intermediate_1.handle, i64 40, !dbg !15
  %190 = load i64, ptr %189, align 8, !dbg !15
  %191 = icmp eq i64 %190, 0, !dbg !15
  br i1 %191, label %assert_end99, label %assert_fail98, !dbg !15, !prof !16

assert_fail98:                                    ; preds = %assert_end97
  tail call fastcc void @__tvm_set_raised_12(ptr nonnull @.str.15, i32 8, ptr nonnull @.str.43, ptr nonnull @.str.47, ptr nonnull @.str.31, ptr nonnull @.str.14, ptr nonnull @.str.5, ptr nonnull @.str.10, ptr nonnull @.str.9), !dbg !15
  br label %common.ret, !dbg !15

assert_end99:                                     ; preds = %assert_end97
    #dbg_declare(ptr %120, !40, !DIExpression(), !15)
  call void @llvm.assume(i1 true) [ "align"(ptr %120, i64 64) ], !dbg !15
    #dbg_declare(ptr %143, !43, !DIExpression(), !15)
  call void @llvm.assume(i1 true) [ "align"(ptr %143, i64 64) ], !dbg !15
    #dbg_declare(ptr %155, !44, !DIExpression(), !15)
  call void @llvm.assume(i1 true) [ "align"(ptr %155, i64 64) ], !dbg !15
    #dbg_declare(ptr %177, !45, !DIExpression(), !15)
  call void @llvm.assume(i1 true) [ "align"(ptr %177, i64 64) ], !dbg !15
  %192 = tail call fastcc i32 @fused_mean_add_tir_rsqrt_multiply_multiply1_compute_(i32 %dev_id, i64 %s77, i64 %s27, ptr %120, ptr %143, ptr %155, ptr %177), !dbg !15
  br label %common.ret, !dbg !15
}

define dllexport range(i32 -1, 1) i32 @__tvm_ffi_power(ptr noalias readnone captures(none) %self_handle, ptr noalias readonly captures(address_is_null) %args, i32 %num_args, ptr noalias readnone captures(none) %result) local_unnamed_addr #0 !dbg !46 {
entry:
    #dbg_value(ptr %self_handle, !48, !DIExpression(), !52)
    #dbg_value(ptr %args, !49, !DIExpression(), !52)
    #dbg_value(i32 %num_args, !50, !DIExpression(), !52)
    #dbg_value(ptr %result, !51, !DIExpression(), !52)
  %0 = icmp eq i32 %num_args, 2, !dbg !52
  br i1 %0, label %assert_end, label %assert_fail, !dbg !52, !prof !16

common.ret:                                       ; preds = %assert_end47, %assert_fail46, %assert_fail44, %assert_fail42, %assert_fail40, %assert_fail38, %assert_fail34, %assert_fail32, %assert_fail30, %assert_fail28, %assert_fail24, %assert_fail22, %assert_fail20, %assert_fail18, %assert_fail16, %assert_fail14, %assert_fail12, %assert_fail10, %assert_fail5, %assert_fail3, %assert_fail1, %assert_fail
  %common.ret.op = phi i32 [ -1, %assert_fail ], [ -1, %assert_fail1 ], [ -1, %assert_fail3 ], [ -1, %assert_fail5 ], [ -1, %assert_fail10 ], [ -1, %assert_fail12 ], [ -1, %assert_fail14 ], [ -1, %assert_fail16 ], [ -1, %assert_fail18 ], [ -1, %assert_fail20 ], [ -1, %assert_fail22 ], [ -1, %assert_fail24 ], [ -1, %assert_fail28 ], [ -1, %assert_fail30 ], [ -1, %assert_fail32 ], [ -1, %assert_fail34 ], [ -1, %assert_fail38 ], [ -1, %assert_fail40 ], [ -1, %assert_fail42 ], [ -1, %assert_fail44 ], [ -1, %assert_fail46 ], [ 0, %assert_end47 ]
  ret i32 %common.ret.op, !dbg !52

assert_fail:                                      ; preds = %entry
  tail call fastcc void @__tvm_set_raised_6(ptr nonnull @.str, i32 6, ptr nonnull @.str.1, ptr nonnull @.str.13, ptr nonnull @.str.3, ptr nonnull @.str.4, ptr nonnull @.str.48, ptr nonnull @.str.6), !dbg !52
  br label %common.ret, !dbg !52

assert_end:                                       ; preds = %entry
  %.not = icmp eq ptr %args, null, !dbg !52
  br i1 %.not, label %assert_fail1, label %assert_end2, !dbg !52, !prof !17

assert_fail1:                                     ; preds = %assert_end
  tail call fastcc void @__tvm_set_raised_6(ptr nonnull @.str, i32 4, ptr nonnull @.str.7, ptr nonnull @.str.4, ptr nonnull @.str.48, ptr nonnull @.str.6, ptr null, ptr null), !dbg !52
  br label %common.ret, !dbg !52

assert_end2:                                      ; preds = %assert_end
  %x.type_index = load i32, ptr %args, align 4, !dbg !52
    #dbg_value(i32 %x.type_index, !53, !DIExpression(), !52)
    #dbg_value(i32 %x.type_index, !53, !DIExpression(), !52)
  %x.type_index.fr = freeze i32 %x.type_index, !dbg !52
  %1 = icmp sgt i32 %x.type_index.fr, 63, !dbg !52
  br i1 %1, label %assert_end4, label %switch.early.test, !dbg !52

switch.early.test:                                ; preds = %assert_end2
  switch i32 %x.type_index.fr, label %assert_fail3 [
    i32 0, label %if_else
    i32 4, label %if_else
    i32 7, label %if_else
  ], !dbg !52, !prof !19

assert_fail3:                                     ; preds = %switch.early.test
  tail call fastcc void @__tvm_set_raised_6(ptr nonnull @.str, i32 6, ptr nonnull @.str.8, ptr nonnull @.str.9, ptr nonnull @.str.4, ptr nonnull @.str.48, ptr nonnull @.str.10, ptr nonnull @.str.11), !dbg !52
  br label %common.ret, !dbg !52

assert_end4:                                      ; preds = %assert_end2
  %2 = icmp eq i32 %x.type_index.fr, 70, !dbg !52
  br i1 %2, label %if_then, label %if_else, !dbg !52

if_then:                                          ; preds = %assert_end4
  %3 = getelementptr inbounds nuw i8, ptr %args, i64 8, !dbg !52
  %4 = load ptr, ptr %3, align 8, !dbg !52
  %5 = getelementptr inbounds nuw i8, ptr %4, i64 24, !dbg !52
  br label %if_end, !dbg !52

if_else:                                          ; preds = %switch.early.test, %switch.early.test, %switch.early.test, %assert_end4
  %6 = getelementptr inbounds nuw i8, ptr %args, i64 8, !dbg !52
  %7 = load ptr, ptr %6, align 8, !dbg !52
  br label %if_end, !dbg !52

if_end:                                           ; preds = %if_else, %if_then
  %x.handle = phi ptr [ %5, %if_then ], [ %7, %if_else ], !dbg !52
    #dbg_declare(ptr %x.handle, !54, !DIExpression(), !52)
    #dbg_declare(ptr %x.handle, !54, !DIExpression(), !52)
  %8 = getelementptr inbounds nuw i8, ptr %args, i64 16, !dbg !52
  %T_power.type_index = load i32, ptr %8, align 4, !dbg !52
    #dbg_value(i32 %T_power.type_index, !55, !DIExpression(), !52)
    #dbg_value(i32 %T_power.type_index, !55, !DIExpression(), !52)
  %T_power.type_index.fr = freeze i32 %T_power.type_index, !dbg !52
  %9 = icmp sgt i32 %T_power.type_index.fr, 63, !dbg !52
  br i1 %9, label %assert_end6, label %switch.early.test48, !dbg !52

switch.early.test48:                              ; preds = %if_end
  switch i32 %T_power.type_index.fr, label %assert_fail5 [
    i32 0, label %if_else8
    i32 4, label %if_else8
    i32 7, label %if_else8
  ], !dbg !52, !prof !19

assert_fail5:                                     ; preds = %switch.early.test48
  tail call fastcc void @__tvm_set_raised_6(ptr nonnull @.str, i32 6, ptr nonnull @.str.8, ptr nonnull @.str.12, ptr nonnull @.str.4, ptr nonnull @.str.48, ptr nonnull @.str.10, ptr nonnull @.str.11), !dbg !52
  br label %common.ret, !dbg !52

assert_end6:                                      ; preds = %if_end
  %10 = icmp eq i32 %T_power.type_index.fr, 70, !dbg !52
  br i1 %10, label %if_then7, label %if_else8, !dbg !52

if_then7:                                         ; preds = %assert_end6
  %11 = getelementptr inbounds nuw i8, ptr %args, i64 24, !dbg !52
  %12 = load ptr, ptr %11, align 8, !dbg !52
  %13 = getelementptr inbounds nuw i8, ptr %12, i64 24, !dbg !52
  br label %if_end9, !dbg !52

if_else8:                                         ; preds = %switch.early.test48, %switch.early.test48, %switch.early.test48, %assert_end6
  %14 = getelementptr inbounds nuw i8, ptr %args, i64 24, !dbg !52
  %15 = load ptr, ptr %14, align 8, !dbg !52
  br label %if_end9, !dbg !52

if_end9:                                          ; preds = %if_else8, %if_then7
  %T_power.handle = phi ptr [ %13, %if_then7 ], [ %15, %if_else8 ], !dbg !52
    #dbg_declare(ptr %T_power.handle, !56, !DIExpression(), !52)
    #dbg_declare(ptr %T_power.handle, !56, !DIExpression(), !52)
  %.not49 = icmp eq ptr %x.handle, null, !dbg !52
  br i1 %.not49, label %assert_fail10, label %assert_end11, !dbg !52, !prof !17

assert_fail10:                                    ; preds = %if_end9
  tail call fastcc void @__tvm_set_raised_6(ptr nonnull @.str, i32 6, ptr nonnull @.str.8, ptr nonnull @.str.9, ptr nonnull @.str.4, ptr nonnull @.str.48, ptr nonnull @.str.10, ptr nonnull @.str.11), !dbg !52
  br label %common.ret, !dbg !52

assert_end11:                                     ; preds = %if_end9
  %16 = getelementptr inbounds nuw i8, ptr %x.handle, i64 16, !dbg !52
  %17 = load i32, ptr %16, align 4, !dbg !52
  %18 = icmp eq i32 %17, 2, !dbg !52
  br i1 %18, label %assert_end13, label %assert_fail12, !dbg !52, !prof !16

assert_fail12:                                    ; preds = %assert_end11
  tail call fastcc void @__tvm_set_raised_12(ptr nonnull @.str.15, i32 8, ptr nonnull @.str.16, ptr nonnull @.str.23, ptr nonnull @.str.18, ptr nonnull @.str.9, ptr nonnull @.str.48, ptr nonnull @.str.10, ptr nonnull @.str.13), !dbg !52
  br label %common.ret, !dbg !52

assert_end13:                                     ; preds = %assert_end11
  %19 = getelementptr inbounds nuw i8, ptr %x.handle, i64 22, !dbg !52
  %20 = load i16, ptr %19, align 2, !dbg !52
  %21 = icmp eq i16 %20, 1, !dbg !52
  %22 = getelementptr inbounds nuw i8, ptr %x.handle, i64 21, !dbg !52
  %23 = load i8, ptr %22, align 1, !dbg !52
  %24 = icmp eq i8 %23, 32, !dbg !52
  %25 = getelementptr inbounds nuw i8, ptr %x.handle, i64 20, !dbg !52
  %26 = load i8, ptr %25, align 2, !dbg !52
  %27 = icmp eq i8 %26, 2, !dbg !52
  %28 = and i1 %24, %27, !dbg !52
  %29 = and i1 %21, %28, !dbg !52
  br i1 %29, label %assert_end15, label %assert_fail14, !dbg !52, !prof !16

assert_fail14:                                    ; preds = %assert_end13
  tail call fastcc void @__tvm_set_raised_12(ptr nonnull @.str, i32 8, ptr nonnull @.str.16, ptr nonnull @.str.23, ptr nonnull @.str.19, ptr nonnull @.str.9, ptr nonnull @.str.48, ptr nonnull @.str.10, ptr nonnull @.str.20), !dbg !52
  br label %common.ret, !dbg !52

assert_end15:                                     ; preds = %assert_end13
  %30 = getelementptr inbounds nuw i8, ptr %x.handle, i64 24, !dbg !52
  %power.x_shape = load ptr, ptr %30, align 8, !dbg !52
    #dbg_declare(ptr %power.x_shape, !57, !DIExpression(), !52)
    #dbg_declare(ptr %power.x_shape, !57, !DIExpression(), !52)
  %s77 = load i64, ptr %power.x_shape, align 8, !dbg !52
    #dbg_value(i64 %s77, !58, !DIExpression(), !52)
    #dbg_value(i64 %s77, !58, !DIExpression(), !52)
  %31 = getelementptr inbounds nuw i8, ptr %power.x_shape, i64 8, !dbg !52
  %s27 = load i64, ptr %31, align 8, !dbg !52
    #dbg_value(i64 %s27, !59, !DIExpression(), !52)
    #dbg_value(i64 %s27, !59, !DIExpression(), !52)
  %32 = getelementptr inbounds nuw i8, ptr %x.handle, i64 32, !dbg !52
  %power.x_strides = load ptr, ptr %32, align 8, !dbg !52
    #dbg_declare(ptr %power.x_strides, !60, !DIExpression(), !52)
    #dbg_declare(ptr %power.x_strides, !60, !DIExpression(), !52)
  %33 = getelementptr inbounds nuw i8, ptr %x.handle, i64 8, !dbg !52
  %34 = load i32, ptr %33, align 8, !dbg !52
  %35 = icmp eq i32 %34, 1, !dbg !52
  br i1 %35, label %assert_end17, label %assert_fail16, !dbg !52, !prof !16

assert_fail16:                                    ; preds = %assert_end15
  tail call fastcc void @__tvm_set_raised_12(ptr nonnull @.str.15, i32 8, ptr nonnull @.str.16, ptr nonnull @.str.23, ptr nonnull @.str.21, ptr nonnull @.str.9, ptr nonnull @.str.48, ptr nonnull @.str.10, ptr nonnull @.str.22), !dbg !52
  br label %common.ret, !dbg !52

assert_end17:                                     ; preds = %assert_end15
  %36 = getelementptr inbounds nuw i8, ptr %x.handle, i64 12, !dbg !52
  %dev_id = load i32, ptr %36, align 4, !dbg !52
    #dbg_value(i32 %dev_id, !61, !DIExpression(), !52)
    #dbg_value(i32 %dev_id, !61, !DIExpression(), !52)
  %.not50 = icmp eq ptr %T_power.handle, null, !dbg !52
  br i1 %.not50, label %assert_fail18, label %assert_end19, !dbg !52, !prof !17

assert_fail18:                                    ; preds = %assert_end17
  tail call fastcc void @__tvm_set_raised_6(ptr nonnull @.str, i32 6, ptr nonnull @.str.8, ptr nonnull @.str.12, ptr nonnull @.str.4, ptr nonnull @.str.48, ptr nonnull @.str.10, ptr nonnull @.str.11), !dbg !52
  br label %common.ret, !dbg !52

assert_end19:                                     ; preds = %assert_end17
  %37 = getelementptr inbounds nuw i8, ptr %T_power.handle, i64 16, !dbg !52
  %38 = load i32, ptr %37, align 4, !dbg !52
  %39 = icmp eq i32 %38, 2, !dbg !52
  br i1 %39, label %assert_end21, label %assert_fail20, !dbg !52, !prof !16

assert_fail20:                                    ; preds = %assert_end19
  tail call fastcc void @__tvm_set_raised_12(ptr nonnull @.str.15, i32 8, ptr nonnull @.str.16, ptr nonnull @.str.49, ptr nonnull @.str.18, ptr nonnull @.str.12, ptr nonnull @.str.48, ptr nonnull @.str.10, ptr nonnull @.str.13), !dbg !52
  br label %common.ret, !dbg !52

assert_end21:                                     ; preds = %assert_end19
  %40 = getelementptr inbounds nuw i8, ptr %T_power.handle, i64 22, !dbg !52
  %41 = load i16, ptr %40, align 2, !dbg !52
  %42 = icmp eq i16 %41, 1, !dbg !52
  %43 = getelementptr inbounds nuw i8, ptr %T_power.handle, i64 21, !dbg !52
  %44 = load i8, ptr %43, align 1, !dbg !52
  %45 = icmp eq i8 %44, 32, !dbg !52
  %46 = getelementptr inbounds nuw i8, ptr %T_power.handle, i64 20, !dbg !52
  %47 = load i8, ptr %46, align 2, !dbg !52
  %48 = icmp eq i8 %47, 2, !dbg !52
  %49 = and i1 %45, %48, !dbg !52
  %50 = and i1 %42, %49, !dbg !52
  br i1 %50, label %assert_end23, label %assert_fail22, !dbg !52, !prof !16

assert_fail22:                                    ; preds = %assert_end21
  tail call fastcc void @__tvm_set_raised_12(ptr nonnull @.str, i32 8, ptr nonnull @.str.16, ptr nonnull @.str.49, ptr nonnull @.str.19, ptr nonnull @.str.12, ptr nonnull @.str.48, ptr nonnull @.str.10, ptr nonnull @.str.20), !dbg !52
  br label %common.ret, !dbg !52

assert_end23:                                     ; preds = %assert_end21
  %51 = getelementptr inbounds nuw i8, ptr %T_power.handle, i64 24, !dbg !52
  %power.T_power_shape = load ptr, ptr %51, align 8, !dbg !52
    #dbg_declare(ptr %power.T_power_shape, !62, !DIExpression(), !52)
    #dbg_declare(ptr %power.T_power_shape, !62, !DIExpression(), !52)
  %52 = getelementptr inbounds nuw i8, ptr %T_power.handle, i64 32, !dbg !52
  %power.T_power_strides = load ptr, ptr %52, align 8, !dbg !52
    #dbg_declare(ptr %power.T_power_strides, !63, !DIExpression(), !52)
    #dbg_declare(ptr %power.T_power_strides, !63, !DIExpression(), !52)
  %53 = getelementptr inbounds nuw i8, ptr %T_power.handle, i64 8, !dbg !52
  %54 = load i32, ptr %53, align 8, !dbg !52
  %55 = icmp eq i32 %54, 1, !dbg !52
  br i1 %55, label %assert_end25, label %assert_fail24, !dbg !52, !prof !16

assert_fail24:                                    ; preds = %assert_end23
  tail call fastcc void @__tvm_set_raised_12(ptr nonnull @.str.15, i32 8, ptr nonnull @.str.16, ptr nonnull @.str.49, ptr nonnull @.str.21, ptr nonnull @.str.12, ptr nonnull @.str.48, ptr nonnull @.str.10, ptr nonnull @.str.22), !dbg !52
  br label %common.ret, !dbg !52

assert_end25:                                     ; preds = %assert_end23
  %.not51 = icmp eq ptr %power.x_strides, null, !dbg !52
  br i1 %.not51, label %if_end27, label %if_then26, !dbg !52, !prof !17

if_then26:                                        ; preds = %assert_end25
  %56 = load i64, ptr %power.x_strides, align 8, !dbg !52
  %57 = icmp eq i64 %s27, %56, !dbg !52
  %58 = icmp eq i64 %s77, 1, !dbg !52
  %59 = or i1 %58, %57, !dbg !52
  %60 = getelementptr inbounds nuw i8, ptr %power.x_strides, i64 8, !dbg !52
  %61 = load i64, ptr %60, align 8, !dbg !52
  %62 = icmp eq i64 %61, 1, !dbg !52
  %63 = icmp eq i64 %s27, 1, !dbg !52
  %64 = or i1 %63, %62, !dbg !52
  %65 = and i1 %59, %64, !dbg !52
  br i1 %65, label %if_end27, label %assert_fail28, !dbg !52, !prof !16

if_end27:                                         ; preds = %if_then26, %assert_end25
  %66 = load ptr, ptr %x.handle, align 8, !dbg !52
  %67 = icmp ne ptr %66, null, !dbg !52
  %68 = mul nsw i64 %s27, %s77, !dbg !52
  %69 = icmp eq i64 %68, 0, !dbg !52
  %70 = or i1 %69, %67, !dbg !52
  br i1 %70, label %assert_end31, label %assert_fail30, !dbg !52, !prof !16

assert_fail28:                                    ; preds = %if_then26
  tail call fastcc void @__tvm_set_raised_12(ptr nonnull @.str.15, i32 7, ptr nonnull @.str.16, ptr nonnull @.str.23, ptr nonnull @.str.26, ptr nonnull @.str.9, ptr nonnull @.str.48, ptr nonnull @.str.27, ptr null), !dbg !52
  br label %common.ret, !dbg !52

assert_fail30:                                    ; preds = %if_end27
  tail call fastcc void @__tvm_set_raised_6(ptr nonnull @.str.15, i32 6, ptr nonnull @.str.23, ptr nonnull @.str.28, ptr nonnull @.str.9, ptr nonnull @.str.4, ptr nonnull @.str.48, ptr nonnull @.str.29), !dbg !52
  br label %common.ret, !dbg !52

assert_end31:                                     ; preds = %if_end27
  %71 = load i64, ptr %power.T_power_shape, align 8, !dbg !52
  %72 = icmp eq i64 %s77, %71, !dbg !52
  br i1 %72, label %assert_end33, label %assert_fail32, !dbg !52, !prof !16

assert_fail32:                                    ; preds = %assert_end31
  tail call fastcc void @__tvm_set_raised_12(ptr nonnull @.str.15, i32 8, ptr nonnull @.str.16, ptr nonnull @.str.50, ptr nonnull @.str.31, ptr nonnull @.str.12, ptr nonnull @.str.48, ptr nonnull @.str.32, ptr nonnull @.str.30), !dbg !52
  br label %common.ret, !dbg !52

assert_end33:                                     ; preds = %assert_end31
  %73 = getelementptr inbounds nuw i8, ptr %power.T_power_shape, i64 8, !dbg !52
  %74 = load i64, ptr %73, align 8, !dbg !52
  %75 = icmp eq i64 %s27, %74, !dbg !52
  br i1 %75, label %assert_end35, label %assert_fail34, !dbg !52, !prof !16

assert_fail34:                                    ; preds = %assert_end33
  tail call fastcc void @__tvm_set_raised_12(ptr nonnull @.str.15, i32 8, ptr nonnull @.str.16, ptr nonnull @.str.51, ptr nonnull @.str.31, ptr nonnull @.str.12, ptr nonnull @.str.48, ptr nonnull @.str.32, ptr nonnull @.str.34), !dbg !52
  br label %common.ret, !dbg !52

assert_end35:                                     ; preds = %assert_end33
  %.not52 = icmp eq ptr %power.T_power_strides, null, !dbg !52
  br i1 %.not52, label %if_end37, label %if_then36, !dbg !52, !prof !17

if_then36:                                        ; preds = %assert_end35
  %76 = load i64, ptr %power.T_power_strides, align 8, !dbg !52
  %77 = icmp eq i64 %s27, %76, !dbg !52
  %78 = icmp eq i64 %s77, 1, !dbg !52
  %79 = or i1 %78, %77, !dbg !52
  %80 = getelementptr inbounds nuw i8, ptr %power.T_power_strides, i64 8, !dbg !52
  %81 = load i64, ptr %80, align 8, !dbg !52
  %82 = icmp eq i64 %81, 1, !dbg !52
  %83 = icmp eq i64 %s27, 1, !dbg !52
  %84 = or i1 %83, %82, !dbg !52
  %85 = and i1 %79, %84, !dbg !52
  br i1 %85, label %if_end37, label %assert_fail38, !dbg !52, !prof !16

if_end37:                                         ; preds = %if_then36, %assert_end35
  %86 = getelementptr inbounds nuw i8, ptr %T_power.handle, i64 12, !dbg !52
  %87 = load i32, ptr %86, align 4, !dbg !52
  %88 = icmp eq i32 %dev_id, %87, !dbg !52
  br i1 %88, label %assert_end41, label %assert_fail40, !dbg !52, !prof !16

assert_fail38:                                    ; preds = %if_then36
  tail call fastcc void @__tvm_set_raised_12(ptr nonnull @.str.15, i32 7, ptr nonnull @.str.16, ptr nonnull @.str.49, ptr nonnull @.str.26, ptr nonnull @.str.12, ptr nonnull @.str.48, ptr nonnull @.str.27, ptr null), !dbg !52
  br label %common.ret, !dbg !52

assert_fail40:                                    ; preds = %if_end37
  tail call fastcc void @__tvm_set_raised_12(ptr nonnull @.str.15, i32 8, ptr nonnull @.str.16, ptr nonnull @.str.52, ptr nonnull @.str.31, ptr nonnull @.str.12, ptr nonnull @.str.48, ptr nonnull @.str.32, ptr nonnull @.str.36), !dbg !52
  br label %common.ret, !dbg !52

assert_end41:                                     ; preds = %if_end37
  %89 = load ptr, ptr %T_power.handle, align 8, !dbg !52
  %90 = icmp ne ptr %89, null, !dbg !52
  %91 = or i1 %69, %90, !dbg !52
  br i1 %91, label %assert_end43, label %assert_fail42, !dbg !52, !prof !16

assert_fail42:                                    ; preds = %assert_end41
  tail call fastcc void @__tvm_set_raised_6(ptr nonnull @.str.15, i32 6, ptr nonnull @.str.49, ptr nonnull @.str.28, ptr nonnull @.str.12, ptr nonnull @.str.4, ptr nonnull @.str.48, ptr nonnull @.str.29), !dbg !52
  br label %common.ret, !dbg !52

assert_end43:                                     ; preds = %assert_end41
  %92 = getelementptr inbounds nuw i8, ptr %x.handle, i64 40, !dbg !52
  %93 = load i64, ptr %92, align 8, !dbg !52
  %94 = icmp eq i64 %93, 0, !dbg !52
  br i1 %94, label %assert_end45, label %assert_fail44, !dbg !52, !prof !16

assert_fail44:                                    ; preds = %assert_end43
  tail call fastcc void @__tvm_set_raised_12(ptr nonnull @.str.15, i32 8, ptr nonnull @.str.43, ptr nonnull @.str.45, ptr nonnull @.str.31, ptr nonnull @.str.9, ptr nonnull @.str.48, ptr nonnull @.str.10, ptr nonnull @.str.9), !dbg !52
  br label %common.ret, !dbg !52

assert_end45:                                     ; preds = %assert_end43
  %95 = getelementptr inbounds nuw i8, ptr %T_power.handle, i64 40, !dbg !52
  %96 = load i64, ptr %95, align 8, !dbg !52
  %97 = icmp eq i64 %96, 0, !dbg !52
  br i1 %97, label %assert_end47, label %assert_fail46, !dbg !52, !prof !16

assert_fail46:                                    ; preds = %assert_end45
  tail call fastcc void @__tvm_set_raised_12(ptr nonnull @.str.15, i32 8, ptr nonnull @.str.43, ptr nonnull @.str.53, ptr nonnull @.str.31, ptr nonnull @.str.12, ptr nonnull @.str.48, ptr nonnull @.str.10, ptr nonnull @.str.9), !dbg !52
  br label %common.ret, !dbg !52

assert_end47:                                     ; preds = %assert_end45
    #dbg_declare(ptr %66, !64, !DIExpression(), !52)
  call void @llvm.assume(i1 true) [ "align"(ptr %66, i64 64) ], !dbg !52
    #dbg_declare(ptr %89, !65, !DIExpression(), !52)
  call void @llvm.assume(i1 true) [ "align"(ptr %89, i64 64) ], !dbg !52
  tail call fastcc void @power_compute_(i64 %s77, i64 %s27, ptr %66, ptr %89), !dbg !52
  br label %common.ret, !dbg !52
}

; Function Attrs: noinline
define internal fastcc void @__tvm_set_raised_6(ptr %0, i32 range(i32 4, 7) %1, ptr %2, ptr %3, ptr %4, ptr %5, ptr %6, ptr %7) unnamed_addr #1 {
entry:
  %8 = alloca [6 x ptr], align 8
  store ptr %2, ptr %8, align 8
  %9 = getelementptr inbounds nuw i8, ptr %8, i64 8
  store ptr %3, ptr %9, align 8
  %10 = getelementptr inbounds nuw i8, ptr %8, i64 16
  store ptr %4, ptr %10, align 8
  %11 = getelementptr inbounds nuw i8, ptr %8, i64 24
  store ptr %5, ptr %11, align 8
  %12 = getelementptr inbounds nuw i8, ptr %8, i64 32
  store ptr %6, ptr %12, align 8
  %13 = getelementptr inbounds nuw i8, ptr %8, i64 40
  store ptr %7, ptr %13, align 8
  call void @TVMFFIErrorSetRaisedFromCStrParts(ptr %0, ptr nonnull %8, i32 %1)
  ret void
}

declare void @TVMFFIErrorSetRaisedFromCStrParts(ptr, ptr, i32) local_unnamed_addr

; Function Attrs: noinline
define internal fastcc void @__tvm_set_raised_12(ptr %0, i32 range(i32 7, 9) %1, ptr %2, ptr %3, ptr %4, ptr %5, ptr %6, ptr %7, ptr %8) unnamed_addr #1 {
entry:
  %9 = alloca [12 x ptr], align 8
  store ptr %2, ptr %9, align 8
  %10 = getelementptr inbounds nuw i8, ptr %9, i64 8
  store ptr %3, ptr %10, align 8
  %11 = getelementptr inbounds nuw i8, ptr %9, i64 16
  store ptr %4, ptr %11, align 8
  %12 = getelementptr inbounds nuw i8, ptr %9, i64 24
  store ptr %5, ptr %12, align 8
  %13 = getelementptr inbounds nuw i8, ptr %9, i64 32
  store ptr @.str.4, ptr %13, align 8
  %14 = getelementptr inbounds nuw i8, ptr %9, i64 40
  store ptr %6, ptr %14, align 8
  %15 = getelementptr inbounds nuw i8, ptr %9, i64 48
  store ptr %7, ptr %15, align 8
  %16 = getelementptr inbounds nuw i8, ptr %9, i64 56
  store ptr %8, ptr %16, align 8
  %17 = getelementptr inbounds nuw i8, ptr %9, i64 64
  call void @llvm.memset.p0.i64(ptr noundef nonnull align 8 dereferenceable(32) %17, i8 0, i64 32, i1 false)
  call void @TVMFFIErrorSetRaisedFromCStrParts(ptr %0, ptr nonnull %9, i32 %1)
  ret void
}

; Function Attrs: mustprogress nocallback nofree nosync nounwind willreturn memory(inaccessiblemem: write)
declare void @llvm.assume(i1 noundef) #2

; Function Attrs: noinline
define internal fastcc range(i32 -1, 1) i32 @fused_mean_add_tir_rsqrt_multiply_multiply1_compute_(i32 %dev_id, i64 %s77, i64 %s27, ptr noalias readonly align 64 captures(none) %lv, ptr noalias readonly align 64 captures(none) %x, ptr noalias readonly align 64 captures(none) %p_weight, ptr noalias writeonly align 64 captures(none) %T_multiply_intermediate_1) unnamed_addr #3 !dbg !66 {
entry:
    #dbg_value(i32 %dev_id, !70, !DIExpression(), !77)
    #dbg_value(i64 %s77, !71, !DIExpression(), !77)
    #dbg_value(i64 %s27, !72, !DIExpression(), !77)
    #dbg_value(ptr %lv, !73, !DIExpression(), !77)
    #dbg_value(ptr %x, !74, !DIExpression(), !77)
    #dbg_value(ptr %p_weight, !75, !DIExpression(), !77)
    #dbg_value(ptr %T_multiply_intermediate_1, !76, !DIExpression(), !77)
  %0 = shl i64 %s77, 2, !dbg !77
  %1 = load ptr, ptr @__TVMBackendAllocWorkspace, align 8, !dbg !77, !tbaa !78
  %lv_red = tail call ptr %1(i32 1, i32 %dev_id, i64 %0, i32 2, i32 32), !dbg !77
    #dbg_declare(ptr %lv_red, !81, !DIExpression(), !77)
  %2 = icmp eq ptr %lv_red, null, !dbg !77
  br i1 %2, label %common.ret, label %if_end, !dbg !77, !prof !16

common.ret:                                       ; preds = %if_end32, %for_end_ax023, %if_end, %entry
  %common.ret.op = phi i32 [ -1, %for_end_ax023 ], [ -1, %entry ], [ -1, %if_end ], [ %., %if_end32 ]
  ret i32 %common.ret.op, !dbg !77

if_end:                                           ; preds = %entry
    #dbg_value(i64 poison, !82, !DIExpression(), !77)
  %3 = mul i64 %0, %s27, !dbg !77
  %4 = load ptr, ptr @__TVMBackendAllocWorkspace, align 8, !dbg !77, !tbaa !78
  %T_multiply_intermediate = tail call ptr %4(i32 1, i32 %dev_id, i64 %3, i32 2, i32 32), !dbg !77
    #dbg_declare(ptr %T_multiply_intermediate, !83, !DIExpression(), !77)
  %5 = icmp eq ptr %T_multiply_intermediate, null, !dbg !77
  br i1 %5, label %common.ret, label %if_end2, !dbg !77, !prof !16

if_end2:                                          ; preds = %if_end
    #dbg_declare(ptr %lv, !84, !DIExpression(), !77)
  call void @llvm.assume(i1 true) [ "align"(ptr %lv, i64 64) ], !dbg !77
    #dbg_declare(ptr %x, !85, !DIExpression(), !77)
  call void @llvm.assume(i1 true) [ "align"(ptr %x, i64 64) ], !dbg !77
    #dbg_declare(ptr %p_weight, !86, !DIExpression(), !77)
  call void @llvm.assume(i1 true) [ "align"(ptr %p_weight, i64 64) ], !dbg !77
    #dbg_declare(ptr %T_multiply_intermediate_1, !87, !DIExpression(), !77)
  call void @llvm.assume(i1 true) [ "align"(ptr %T_multiply_intermediate_1, i64 64) ], !dbg !77
    #dbg_declare(ptr %lv_red, !81, !DIExpression(), !77)
    #dbg_value(i64 0, !88, !DIExpression(), !77)
  %6 = icmp sgt i64 %s77, 0, !dbg !77
  br i1 %6, label %for_begin_k1.preheader.lr.ph, label %for_end_ax023, !dbg !77, !prof !89

for_begin_k1.preheader.lr.ph:                     ; preds = %if_end2
  %7 = icmp sgt i64 %s27, 0
  br i1 %7, label %for_begin_k1.preheader.us.preheader, label %iter.check84, !prof !89

for_begin_k1.preheader.us.preheader:              ; preds = %for_begin_k1.preheader.lr.ph
  %exitcond.peel.not = icmp eq i64 %s27, 1
  %8 = add nsw i64 %s27, -1, !dbg !77
  %min.iters.check = icmp ult i64 %8, 4
  %min.iters.check65 = icmp ult i64 %8, 32
  %n.mod.vf = and i64 %8, 28
  %n.vec = and i64 %8, -32
  %cmp.n = icmp eq i64 %8, %n.vec
  %ind.end = or disjoint i64 %n.vec, 1
  %min.epilog.iters.check = icmp eq i64 %n.mod.vf, 0
  %n.vec75 = and i64 %8, -4
  %9 = or disjoint i64 %n.vec75, 1
  %cmp.n80 = icmp eq i64 %8, %n.vec75
  br label %for_begin_k1.preheader.us, !dbg !77

for_begin_k1.preheader.us:                        ; preds = %for_begin_k1.preheader.us.preheader, %for_begin_k1.for_end_k1_crit_edge.us
  %ax039.us = phi i64 [ %38, %for_begin_k1.for_end_k1_crit_edge.us ], [ 0, %for_begin_k1.preheader.us.preheader ]
    #dbg_value(i64 %ax039.us, !88, !DIExpression(), !77)
    #dbg_value(i64 0, !90, !DIExpression(), !77)
  %10 = getelementptr inbounds nuw float, ptr %lv_red, i64 %ax039.us
  %11 = mul nuw nsw i64 %ax039.us, %s27
  %12 = getelementptr float, ptr %lv, i64 %11
  %13 = load float, ptr %12, align 4, !dbg !77, !tbaa !91
  %14 = fadd reassoc float %13, 0.000000e+00, !dbg !77
    #dbg_value(i64 1, !90, !DIExpression(), !77)
  br i1 %exitcond.peel.not, label %for_begin_k1.for_end_k1_crit_edge.us, label %iter.check, !dbg !77, !prof !93

iter.check:                                       ; preds = %for_begin_k1.preheader.us
  br i1 %min.iters.check, label %for_body_k1.us.preheader, label %vector.main.loop.iter.check, !dbg !77, !prof !94

vector.main.loop.iter.check:                      ; preds = %iter.check
  br i1 %min.iters.check65, label %vec.epilog.ph, label %vector.ph, !dbg !77, !prof !94

vector.ph:                                        ; preds = %vector.main.loop.iter.check
  %15 = insertelement <8 x float> <float poison, float -0.000000e+00, float -0.000000e+00, float -0.000000e+00, float -0.000000e+00, float -0.000000e+00, float -0.000000e+00, float -0.000000e+00>, float %14, i64 0
  br label %vector.body, !dbg !77

vector.body:                                      ; preds = %vector.body, %vector.ph
  %index = phi i64 [ 0, %vector.ph ], [ %index.next, %vector.body ]
  %vec.phi = phi <8 x float> [ %15, %vector.ph ], [ %21, %vector.body ]
  %vec.phi66 = phi <8 x float> [ splat (float -0.000000e+00), %vector.ph ], [ %22, %vector.body ]
  %vec.phi67 = phi <8 x float> [ splat (float -0.000000e+00), %vector.ph ], [ %23, %vector.body ]
  %vec.phi68 = phi <8 x float> [ splat (float -0.000000e+00), %vector.ph ], [ %24, %vector.body ]
  %16 = getelementptr float, ptr %12, i64 %index, !dbg !77
  %17 = getelementptr i8, ptr %16, i64 4, !dbg !77
  %18 = getelementptr i8, ptr %16, i64 36, !dbg !77
  %19 = getelementptr i8, ptr %16, i64 68, !dbg !77
  %20 = getelementptr i8, ptr %16, i64 100, !dbg !77
  %wide.load = load <8 x float>, ptr %17, align 4, !dbg !77, !tbaa !91
  %wide.load69 = load <8 x float>, ptr %18, align 4, !dbg !77, !tbaa !91
  %wide.load70 = load <8 x float>, ptr %19, align 4, !dbg !77, !tbaa !91
  %wide.load71 = load <8 x float>, ptr %20, align 4, !dbg !77, !tbaa !91
  %21 = fadd reassoc <8 x float> %wide.load, %vec.phi, !dbg !77
  %22 = fadd reassoc <8 x float> %wide.load69, %vec.phi66, !dbg !77
  %23 = fadd reassoc <8 x float> %wide.load70, %vec.phi67, !dbg !77
  %24 = fadd reassoc <8 x float> %wide.load71, %vec.phi68, !dbg !77
  %index.next = add nuw i64 %index, 32
  %25 = icmp eq i64 %index.next, %n.vec, !dbg !77
  br i1 %25, label %middle.block, label %vector.body, !dbg !77, !prof !95, !llvm.loop !96

middle.block:                                     ; preds = %vector.body
  %bin.rdx = fadd reassoc <8 x float> %22, %21, !dbg !77
  %bin.rdx72 = fadd reassoc <8 x float> %23, %bin.rdx, !dbg !77
  %bin.rdx73 = fadd reassoc <8 x float> %24, %bin.rdx72, !dbg !77
  %26 = tail call reassoc float @llvm.vector.reduce.fadd.v8f32(float -0.000000e+00, <8 x float> %bin.rdx73), !dbg !77
  br i1 %cmp.n, label %for_begin_k1.for_end_k1_crit_edge.us, label %vec.epilog.iter.check, !dbg !77, !prof !101

vec.epilog.iter.check:                            ; preds = %middle.block
  br i1 %min.epilog.iters.check, label %for_body_k1.us.preheader, label %vec.epilog.ph, !prof !102

vec.epilog.ph:                                    ; preds = %vector.main.loop.iter.check, %vec.epilog.iter.check
  %vec.epilog.resume.val = phi i64 [ %n.vec, %vec.epilog.iter.check ], [ 0, %vector.main.loop.iter.check ]
  %bc.merge.rdx = phi float [ %26, %vec.epilog.iter.check ], [ %14, %vector.main.loop.iter.check ]
  %27 = insertelement <4 x float> <float poison, float -0.000000e+00, float -0.000000e+00, float -0.000000e+00>, float %bc.merge.rdx, i64 0
  br label %vec.epilog.vector.body

vec.epilog.vector.body:                           ; preds = %vec.epilog.vector.body, %vec.epilog.ph
  %index76 = phi i64 [ %vec.epilog.resume.val, %vec.epilog.ph ], [ %index.next79, %vec.epilog.vector.body ]
  %vec.phi77 = phi <4 x float> [ %27, %vec.epilog.ph ], [ %30, %vec.epilog.vector.body ]
  %28 = getelementptr float, ptr %12, i64 %index76, !dbg !77
  %29 = getelementptr i8, ptr %28, i64 4, !dbg !77
  %wide.load78 = load <4 x float>, ptr %29, align 4, !dbg !77, !tbaa !91
  %30 = fadd reassoc <4 x float> %wide.load78, %vec.phi77, !dbg !77
  %index.next79 = add nuw i64 %index76, 4
  %31 = icmp eq i64 %index.next79, %n.vec75, !dbg !77
  br i1 %31, label %vec.epilog.middle.block, label %vec.epilog.vector.body, !dbg !77, !llvm.loop !103

vec.epilog.middle.block:                          ; preds = %vec.epilog.vector.body
  %32 = tail call reassoc float @llvm.vector.reduce.fadd.v4f32(float -0.000000e+00, <4 x float> %30), !dbg !77
  br i1 %cmp.n80, label %for_begin_k1.for_end_k1_crit_edge.us, label %for_body_k1.us.preheader, !dbg !77, !prof !105

for_body_k1.us.preheader:                         ; preds = %iter.check, %vec.epilog.iter.check, %vec.epilog.middle.block
  %.ph = phi float [ %14, %iter.check ], [ %26, %vec.epilog.iter.check ], [ %32, %vec.epilog.middle.block ]
  %k138.us.ph = phi i64 [ 1, %iter.check ], [ %ind.end, %vec.epilog.iter.check ], [ %9, %vec.epilog.middle.block ]
  br label %for_body_k1.us, !dbg !77

for_body_k1.us:                                   ; preds = %for_body_k1.us.preheader, %for_body_k1.us
  %33 = phi float [ %36, %for_body_k1.us ], [ %.ph, %for_body_k1.us.preheader ]
  %k138.us = phi i64 [ %37, %for_body_k1.us ], [ %k138.us.ph, %for_body_k1.us.preheader ]
    #dbg_value(i64 %k138.us, !90, !DIExpression(), !77)
  %34 = getelementptr float, ptr %12, i64 %k138.us, !dbg !77
  %35 = load float, ptr %34, align 4, !dbg !77, !tbaa !91
  %36 = fadd reassoc float %35, %33, !dbg !77
  %37 = add nuw nsw i64 %k138.us, 1, !dbg !77
    #dbg_value(i64 %37, !90, !DIExpression(), !77)
  %exitcond.not = icmp eq i64 %37, %s27, !dbg !77
  br i1 %exitcond.not, label %for_begin_k1.for_end_k1_crit_edge.us, label %for_body_k1.us, !dbg !77, !prof !106, !llvm.loop !107

for_begin_k1.for_end_k1_crit_edge.us:             ; preds = %for_body_k1.us, %middle.block, %vec.epilog.middle.block, %for_begin_k1.preheader.us
  %.lcssa = phi float [ %14, %for_begin_k1.preheader.us ], [ %32, %vec.epilog.middle.block ], [ %26, %middle.block ], [ %36, %for_body_k1.us ], !dbg !77
  store float %.lcssa, ptr %10, align 4, !dbg !77, !tbaa !108
  %38 = add nuw nsw i64 %ax039.us, 1, !dbg !77
    #dbg_value(i64 %38, !88, !DIExpression(), !77)
  %exitcond51.not = icmp eq i64 %38, %s77, !dbg !77
  br i1 %exitcond51.not, label %iter.check84, label %for_begin_k1.preheader.us, !dbg !77, !prof !93

iter.check84:                                     ; preds = %for_begin_k1.for_end_k1_crit_edge.us, %for_begin_k1.preheader.lr.ph
  %39 = sitofp i64 %s27 to float
  %min.iters.check82 = icmp ult i64 %s77, 4, !dbg !77
  br i1 %min.iters.check82, label %for_body_ax07.preheader, label %vector.main.loop.iter.check86, !dbg !77, !prof !94

vector.main.loop.iter.check86:                    ; preds = %iter.check84
  %min.iters.check85 = icmp ult i64 %s77, 32, !dbg !77
  br i1 %min.iters.check85, label %vec.epilog.ph103, label %vector.ph87, !dbg !77, !prof !94

vector.ph87:                                      ; preds = %vector.main.loop.iter.check86
  %n.mod.vf88 = and i64 %s77, 28
  %n.vec89 = and i64 %s77, 9223372036854775776
  %broadcast.splatinsert = insertelement <8 x float> poison, float %39, i64 0
  %broadcast.splat = shufflevector <8 x float> %broadcast.splatinsert, <8 x float> poison, <8 x i32> zeroinitializer
  br label %vector.body90, !dbg !77

vector.body90:                                    ; preds = %vector.body90, %vector.ph87
  %index91 = phi i64 [ 0, %vector.ph87 ], [ %index.next96, %vector.body90 ], !dbg !77
  %40 = getelementptr inbounds nuw float, ptr %lv_red, i64 %index91, !dbg !77
  %41 = getelementptr inbounds nuw i8, ptr %40, i64 32, !dbg !77
  %42 = getelementptr inbounds nuw i8, ptr %40, i64 64, !dbg !77
  %43 = getelementptr inbounds nuw i8, ptr %40, i64 96, !dbg !77
  %wide.load92 = load <8 x float>, ptr %40, align 4, !dbg !77, !tbaa !108
  %wide.load93 = load <8 x float>, ptr %41, align 4, !dbg !77, !tbaa !108
  %wide.load94 = load <8 x float>, ptr %42, align 4, !dbg !77, !tbaa !108
  %wide.load95 = load <8 x float>, ptr %43, align 4, !dbg !77, !tbaa !108
  %44 = fdiv reassoc <8 x float> %wide.load92, %broadcast.splat, !dbg !77
  %45 = fdiv reassoc <8 x float> %wide.load93, %broadcast.splat, !dbg !77
  %46 = fdiv reassoc <8 x float> %wide.load94, %broadcast.splat, !dbg !77
  %47 = fdiv reassoc <8 x float> %wide.load95, %broadcast.splat, !dbg !77
  store <8 x float> %44, ptr %40, align 4, !dbg !77, !tbaa !108
  store <8 x float> %45, ptr %41, align 4, !dbg !77, !tbaa !108
  store <8 x float> %46, ptr %42, align 4, !dbg !77, !tbaa !108
  store <8 x float> %47, ptr %43, align 4, !dbg !77, !tbaa !108
  %index.next96 = add nuw i64 %index91, 32, !dbg !77
  %48 = icmp eq i64 %index.next96, %n.vec89, !dbg !77
  br i1 %48, label %middle.block97, label %vector.body90, !dbg !77, !prof !95, !llvm.loop !110

middle.block97:                                   ; preds = %vector.body90
  %cmp.n98 = icmp eq i64 %s77, %n.vec89, !dbg !77
  br i1 %cmp.n98, label %iter.check117, label %vec.epilog.iter.check101, !dbg !77, !prof !101

vec.epilog.iter.check101:                         ; preds = %middle.block97
  %min.epilog.iters.check102 = icmp eq i64 %n.mod.vf88, 0
  br i1 %min.epilog.iters.check102, label %for_body_ax07.preheader, label %vec.epilog.ph103, !prof !102

vec.epilog.ph103:                                 ; preds = %vector.main.loop.iter.check86, %vec.epilog.iter.check101
  %vec.epilog.resume.val99 = phi i64 [ %n.vec89, %vec.epilog.iter.check101 ], [ 0, %vector.main.loop.iter.check86 ]
  %n.vec105 = and i64 %s77, 9223372036854775804
  %broadcast.splatinsert106 = insertelement <4 x float> poison, float %39, i64 0
  %broadcast.splat107 = shufflevector <4 x float> %broadcast.splatinsert106, <4 x float> poison, <4 x i32> zeroinitializer
  br label %vec.epilog.vector.body108

vec.epilog.vector.body108:                        ; preds = %vec.epilog.vector.body108, %vec.epilog.ph103
  %index109 = phi i64 [ %vec.epilog.resume.val99, %vec.epilog.ph103 ], [ %index.next111, %vec.epilog.vector.body108 ], !dbg !77
  %49 = getelementptr inbounds nuw float, ptr %lv_red, i64 %index109, !dbg !77
  %wide.load110 = load <4 x float>, ptr %49, align 4, !dbg !77, !tbaa !108
  %50 = fdiv reassoc <4 x float> %wide.load110, %broadcast.splat107, !dbg !77
  store <4 x float> %50, ptr %49, align 4, !dbg !77, !tbaa !108
  %index.next111 = add nuw i64 %index109, 4, !dbg !77
  %51 = icmp eq i64 %index.next111, %n.vec105, !dbg !77
  br i1 %51, label %vec.epilog.middle.block112, label %vec.epilog.vector.body108, !dbg !77, !prof !106, !llvm.loop !111

vec.epilog.middle.block112:                       ; preds = %vec.epilog.vector.body108
  %cmp.n113 = icmp eq i64 %s77, %n.vec105, !dbg !77
  br i1 %cmp.n113, label %iter.check117, label %for_body_ax07.preheader, !dbg !77, !prof !105

for_body_ax07.preheader:                          ; preds = %iter.check84, %vec.epilog.iter.check101, %vec.epilog.middle.block112
  %ax01040.ph = phi i64 [ 0, %iter.check84 ], [ %n.vec89, %vec.epilog.iter.check101 ], [ %n.vec105, %vec.epilog.middle.block112 ]
  br label %for_body_ax07, !dbg !77

for_body_ax07:                                    ; preds = %for_body_ax07.preheader, %for_body_ax07
  %ax01040 = phi i64 [ %55, %for_body_ax07 ], [ %ax01040.ph, %for_body_ax07.preheader ]
    #dbg_value(i64 %ax01040, !88, !DIExpression(), !77)
  %52 = getelementptr inbounds nuw float, ptr %lv_red, i64 %ax01040, !dbg !77
  %53 = load float, ptr %52, align 4, !dbg !77, !tbaa !108
  %54 = fdiv reassoc float %53, %39, !dbg !77
  store float %54, ptr %52, align 4, !dbg !77, !tbaa !108
  %55 = add nuw nsw i64 %ax01040, 1, !dbg !77
    #dbg_value(i64 %55, !88, !DIExpression(), !77)
  %exitcond52.not = icmp eq i64 %55, %s77, !dbg !77
  br i1 %exitcond52.not, label %iter.check117, label %for_body_ax07, !dbg !77, !prof !112, !llvm.loop !113

iter.check117:                                    ; preds = %for_body_ax07, %vec.epilog.middle.block112, %middle.block97
  %min.iters.check115 = icmp ult i64 %s77, 4, !dbg !77
  br i1 %min.iters.check115, label %for_body_ax012.preheader, label %vector.main.loop.iter.check119, !dbg !77, !prof !94

vector.main.loop.iter.check119:                   ; preds = %iter.check117
  %min.iters.check118 = icmp ult i64 %s77, 32, !dbg !77
  br i1 %min.iters.check118, label %vec.epilog.ph136, label %vector.ph120, !dbg !77, !prof !94

vector.ph120:                                     ; preds = %vector.main.loop.iter.check119
  %n.mod.vf121 = and i64 %s77, 28
  %n.vec122 = and i64 %s77, 9223372036854775776
  br label %vector.body123, !dbg !77

vector.body123:                                   ; preds = %vector.body123, %vector.ph120
  %index124 = phi i64 [ 0, %vector.ph120 ], [ %index.next129, %vector.body123 ], !dbg !77
  %56 = getelementptr inbounds nuw float, ptr %lv_red, i64 %index124, !dbg !77
  %57 = getelementptr inbounds nuw i8, ptr %56, i64 32, !dbg !77
  %58 = getelementptr inbounds nuw i8, ptr %56, i64 64, !dbg !77
  %59 = getelementptr inbounds nuw i8, ptr %56, i64 96, !dbg !77
  %wide.load125 = load <8 x float>, ptr %56, align 4, !dbg !77, !tbaa !108
  %wide.load126 = load <8 x float>, ptr %57, align 4, !dbg !77, !tbaa !108
  %wide.load127 = load <8 x float>, ptr %58, align 4, !dbg !77, !tbaa !108
  %wide.load128 = load <8 x float>, ptr %59, align 4, !dbg !77, !tbaa !108
  %60 = fadd reassoc <8 x float> %wide.load125, splat (float 0x3EB0C6F7A0000000), !dbg !77
  %61 = fadd reassoc <8 x float> %wide.load126, splat (float 0x3EB0C6F7A0000000), !dbg !77
  %62 = fadd reassoc <8 x float> %wide.load127, splat (float 0x3EB0C6F7A0000000), !dbg !77
  %63 = fadd reassoc <8 x float> %wide.load128, splat (float 0x3EB0C6F7A0000000), !dbg !77
  store <8 x float> %60, ptr %56, align 4, !dbg !77, !tbaa !108
  store <8 x float> %61, ptr %57, align 4, !dbg !77, !tbaa !108
  store <8 x float> %62, ptr %58, align 4, !dbg !77, !tbaa !108
  store <8 x float> %63, ptr %59, align 4, !dbg !77, !tbaa !108
  %index.next129 = add nuw i64 %index124, 32, !dbg !77
  %64 = icmp eq i64 %index.next129, %n.vec122, !dbg !77
  br i1 %64, label %middle.block130, label %vector.body123, !dbg !77, !prof !95, !llvm.loop !115

middle.block130:                                  ; preds = %vector.body123
  %cmp.n131 = icmp eq i64 %s77, %n.vec122, !dbg !77
  br i1 %cmp.n131, label %for_body_i0.preheader, label %vec.epilog.iter.check134, !dbg !77, !prof !101

vec.epilog.iter.check134:                         ; preds = %middle.block130
  %min.epilog.iters.check135 = icmp eq i64 %n.mod.vf121, 0
  br i1 %min.epilog.iters.check135, label %for_body_ax012.preheader, label %vec.epilog.ph136, !prof !102

vec.epilog.ph136:                                 ; preds = %vector.main.loop.iter.check119, %vec.epilog.iter.check134
  %vec.epilog.resume.val132 = phi i64 [ %n.vec122, %vec.epilog.iter.check134 ], [ 0, %vector.main.loop.iter.check119 ]
  %n.vec138 = and i64 %s77, 9223372036854775804
  br label %vec.epilog.vector.body139

vec.epilog.vector.body139:                        ; preds = %vec.epilog.vector.body139, %vec.epilog.ph136
  %index140 = phi i64 [ %vec.epilog.resume.val132, %vec.epilog.ph136 ], [ %index.next142, %vec.epilog.vector.body139 ], !dbg !77
  %65 = getelementptr inbounds nuw float, ptr %lv_red, i64 %index140, !dbg !77
  %wide.load141 = load <4 x float>, ptr %65, align 4, !dbg !77, !tbaa !108
  %66 = fadd reassoc <4 x float> %wide.load141, splat (float 0x3EB0C6F7A0000000), !dbg !77
  store <4 x float> %66, ptr %65, align 4, !dbg !77, !tbaa !108
  %index.next142 = add nuw i64 %index140, 4, !dbg !77
  %67 = icmp eq i64 %index.next142, %n.vec138, !dbg !77
  br i1 %67, label %vec.epilog.middle.block143, label %vec.epilog.vector.body139, !dbg !77, !prof !106, !llvm.loop !116

vec.epilog.middle.block143:                       ; preds = %vec.epilog.vector.body139
  %cmp.n144 = icmp eq i64 %s77, %n.vec138, !dbg !77
  br i1 %cmp.n144, label %for_body_i0.preheader, label %for_body_ax012.preheader, !dbg !77, !prof !105

for_body_ax012.preheader:                         ; preds = %iter.check117, %vec.epilog.iter.check134, %vec.epilog.middle.block143
  %ax01541.ph = phi i64 [ 0, %iter.check117 ], [ %n.vec122, %vec.epilog.iter.check134 ], [ %n.vec138, %vec.epilog.middle.block143 ]
  br label %for_body_ax012, !dbg !77

for_body_ax012:                                   ; preds = %for_body_ax012.preheader, %for_body_ax012
  %ax01541 = phi i64 [ %71, %for_body_ax012 ], [ %ax01541.ph, %for_body_ax012.preheader ]
    #dbg_value(i64 %ax01541, !88, !DIExpression(), !77)
  %68 = getelementptr inbounds nuw float, ptr %lv_red, i64 %ax01541, !dbg !77
  %69 = load float, ptr %68, align 4, !dbg !77, !tbaa !108
  %70 = fadd reassoc float %69, 0x3EB0C6F7A0000000, !dbg !77
  store float %70, ptr %68, align 4, !dbg !77, !tbaa !108
  %71 = add nuw nsw i64 %ax01541, 1, !dbg !77
    #dbg_value(i64 %71, !88, !DIExpression(), !77)
  %exitcond53.not = icmp eq i64 %71, %s77, !dbg !77
  br i1 %exitcond53.not, label %for_body_i0.preheader, label %for_body_ax012, !dbg !77, !prof !112, !llvm.loop !117

for_body_i0.preheader:                            ; preds = %for_body_ax012, %vec.epilog.middle.block143, %middle.block130
  %min.iters.check146 = icmp ult i64 %s77, 8, !dbg !77
  br i1 %min.iters.check146, label %for_body_i0.preheader230, label %vector.ph147, !dbg !77, !prof !94

vector.ph147:                                     ; preds = %for_body_i0.preheader
  %n.vec149 = and i64 %s77, 9223372036854775800
  br label %vector.body150, !dbg !77

vector.body150:                                   ; preds = %vector.body150, %vector.ph147
  %index151 = phi i64 [ 0, %vector.ph147 ], [ %index.next153, %vector.body150 ], !dbg !77
  %72 = getelementptr inbounds nuw float, ptr %lv_red, i64 %index151, !dbg !77
  %wide.load152 = load <8 x float>, ptr %72, align 4, !dbg !77, !tbaa !108
  %73 = tail call reassoc <8 x float> @llvm.sqrt.v8f32(<8 x float> %wide.load152), !dbg !77
  %74 = fdiv reassoc <8 x float> splat (float 1.000000e+00), %73, !dbg !77
  store <8 x float> %74, ptr %72, align 4, !dbg !77, !tbaa !108
  %index.next153 = add nuw i64 %index151, 8, !dbg !77
  %75 = icmp eq i64 %index.next153, %n.vec149, !dbg !77
  br i1 %75, label %middle.block154, label %vector.body150, !dbg !77, !prof !118, !llvm.loop !119

middle.block154:                                  ; preds = %vector.body150
  %cmp.n155 = icmp eq i64 %s77, %n.vec149, !dbg !77
  br i1 %cmp.n155, label %for_begin_ax1.preheader.lr.ph, label %for_body_i0.preheader230, !dbg !77, !prof !121

for_body_i0.preheader230:                         ; preds = %for_body_i0.preheader, %middle.block154
  %i042.ph = phi i64 [ 0, %for_body_i0.preheader ], [ %n.vec149, %middle.block154 ]
  br label %for_body_i0, !dbg !77

for_begin_ax1.preheader.lr.ph:                    ; preds = %for_body_i0, %middle.block154
    #dbg_value(i64 0, !88, !DIExpression(), !77)
  %76 = icmp sgt i64 %s27, 0
  br i1 %76, label %iter.check160.preheader, label %for_end_ax023, !prof !89

iter.check160.preheader:                          ; preds = %for_begin_ax1.preheader.lr.ph
  %min.iters.check158 = icmp ult i64 %s27, 4
  %min.iters.check161 = icmp ult i64 %s27, 32
  %n.mod.vf164 = and i64 %s27, 28
  %n.vec165 = and i64 %s27, 9223372036854775776
  %cmp.n176 = icmp eq i64 %s27, %n.vec165
  %min.epilog.iters.check180 = icmp eq i64 %n.mod.vf164, 0
  %n.vec183 = and i64 %s27, 9223372036854775804
  %cmp.n191 = icmp eq i64 %s27, %n.vec183
  br label %iter.check160, !dbg !77

iter.check160:                                    ; preds = %iter.check160.preheader, %for_begin_ax1.for_end_ax1_crit_edge.us
  %ax02044.us = phi i64 [ %104, %for_begin_ax1.for_end_ax1_crit_edge.us ], [ 0, %iter.check160.preheader ]
    #dbg_value(i64 %ax02044.us, !88, !DIExpression(), !77)
    #dbg_value(i64 0, !122, !DIExpression(), !77)
  %77 = mul nuw nsw i64 %ax02044.us, %s27
  %78 = getelementptr inbounds nuw float, ptr %lv_red, i64 %ax02044.us
  %79 = load float, ptr %78, align 4, !tbaa !108
  br i1 %min.iters.check158, label %for_body_ax1.us.preheader, label %vector.main.loop.iter.check162, !dbg !77, !prof !94

vector.main.loop.iter.check162:                   ; preds = %iter.check160
  br i1 %min.iters.check161, label %vec.epilog.ph181, label %vector.ph163, !dbg !77, !prof !94

vector.ph163:                                     ; preds = %vector.main.loop.iter.check162
  %broadcast.splatinsert166 = insertelement <8 x float> poison, float %79, i64 0
  %broadcast.splat167 = shufflevector <8 x float> %broadcast.splatinsert166, <8 x float> poison, <8 x i32> zeroinitializer
  br label %vector.body168, !dbg !77

vector.body168:                                   ; preds = %vector.body168, %vector.ph163
  %index169 = phi i64 [ 0, %vector.ph163 ], [ %index.next174, %vector.body168 ], !dbg !77
  %80 = add nuw nsw i64 %index169, %77, !dbg !77
  %81 = getelementptr inbounds nuw float, ptr %x, i64 %80, !dbg !77
  %82 = getelementptr inbounds nuw i8, ptr %81, i64 32, !dbg !77
  %83 = getelementptr inbounds nuw i8, ptr %81, i64 64, !dbg !77
  %84 = getelementptr inbounds nuw i8, ptr %81, i64 96, !dbg !77
  %wide.load170 = load <8 x float>, ptr %81, align 4, !dbg !77, !tbaa !123
  %wide.load171 = load <8 x float>, ptr %82, align 4, !dbg !77, !tbaa !123
  %wide.load172 = load <8 x float>, ptr %83, align 4, !dbg !77, !tbaa !123
  %wide.load173 = load <8 x float>, ptr %84, align 4, !dbg !77, !tbaa !123
  %85 = fmul reassoc <8 x float> %broadcast.splat167, %wide.load170, !dbg !77
  %86 = fmul reassoc <8 x float> %broadcast.splat167, %wide.load171, !dbg !77
  %87 = fmul reassoc <8 x float> %broadcast.splat167, %wide.load172, !dbg !77
  %88 = fmul reassoc <8 x float> %broadcast.splat167, %wide.load173, !dbg !77
  %89 = getelementptr inbounds nuw float, ptr %T_multiply_intermediate, i64 %80, !dbg !77
  %90 = getelementptr inbounds nuw i8, ptr %89, i64 32, !dbg !77
  %91 = getelementptr inbounds nuw i8, ptr %89, i64 64, !dbg !77
  %92 = getelementptr inbounds nuw i8, ptr %89, i64 96, !dbg !77
  store <8 x float> %85, ptr %89, align 4, !dbg !77, !tbaa !125
  store <8 x float> %86, ptr %90, align 4, !dbg !77, !tbaa !125
  store <8 x float> %87, ptr %91, align 4, !dbg !77, !tbaa !125
  store <8 x float> %88, ptr %92, align 4, !dbg !77, !tbaa !125
  %index.next174 = add nuw i64 %index169, 32, !dbg !77
  %93 = icmp eq i64 %index.next174, %n.vec165, !dbg !77
  br i1 %93, label %middle.block175, label %vector.body168, !dbg !77, !prof !95, !llvm.loop !127

middle.block175:                                  ; preds = %vector.body168
  br i1 %cmp.n176, label %for_begin_ax1.for_end_ax1_crit_edge.us, label %vec.epilog.iter.check179, !dbg !77, !prof !101

vec.epilog.iter.check179:                         ; preds = %middle.block175
  br i1 %min.epilog.iters.check180, label %for_body_ax1.us.preheader, label %vec.epilog.ph181, !prof !102

vec.epilog.ph181:                                 ; preds = %vector.main.loop.iter.check162, %vec.epilog.iter.check179
  %vec.epilog.resume.val177 = phi i64 [ %n.vec165, %vec.epilog.iter.check179 ], [ 0, %vector.main.loop.iter.check162 ]
  %broadcast.splatinsert184 = insertelement <4 x float> poison, float %79, i64 0
  %broadcast.splat185 = shufflevector <4 x float> %broadcast.splatinsert184, <4 x float> poison, <4 x i32> zeroinitializer
  br label %vec.epilog.vector.body186

vec.epilog.vector.body186:                        ; preds = %vec.epilog.vector.body186, %vec.epilog.ph181
  %index187 = phi i64 [ %vec.epilog.resume.val177, %vec.epilog.ph181 ], [ %index.next189, %vec.epilog.vector.body186 ], !dbg !77
  %94 = add nuw nsw i64 %index187, %77, !dbg !77
  %95 = getelementptr inbounds nuw float, ptr %x, i64 %94, !dbg !77
  %wide.load188 = load <4 x float>, ptr %95, align 4, !dbg !77, !tbaa !123
  %96 = fmul reassoc <4 x float> %broadcast.splat185, %wide.load188, !dbg !77
  %97 = getelementptr inbounds nuw float, ptr %T_multiply_intermediate, i64 %94, !dbg !77
  store <4 x float> %96, ptr %97, align 4, !dbg !77, !tbaa !125
  %index.next189 = add nuw i64 %index187, 4, !dbg !77
  %98 = icmp eq i64 %index.next189, %n.vec183, !dbg !77
  br i1 %98, label %vec.epilog.middle.block190, label %vec.epilog.vector.body186, !dbg !77, !prof !106, !llvm.loop !128

vec.epilog.middle.block190:                       ; preds = %vec.epilog.vector.body186
  br i1 %cmp.n191, label %for_begin_ax1.for_end_ax1_crit_edge.us, label %for_body_ax1.us.preheader, !dbg !77, !prof !105

for_body_ax1.us.preheader:                        ; preds = %iter.check160, %vec.epilog.iter.check179, %vec.epilog.middle.block190
  %ax143.us.ph = phi i64 [ 0, %iter.check160 ], [ %n.vec165, %vec.epilog.iter.check179 ], [ %n.vec183, %vec.epilog.middle.block190 ]
  br label %for_body_ax1.us, !dbg !77

for_body_ax1.us:                                  ; preds = %for_body_ax1.us.preheader, %for_body_ax1.us
  %ax143.us = phi i64 [ %103, %for_body_ax1.us ], [ %ax143.us.ph, %for_body_ax1.us.preheader ]
    #dbg_value(i64 %ax143.us, !122, !DIExpression(), !77)
  %cse_v2.us = add nuw nsw i64 %ax143.us, %77, !dbg !77
    #dbg_value(i64 %cse_v2.us, !129, !DIExpression(), !77)
  %99 = getelementptr inbounds nuw float, ptr %x, i64 %cse_v2.us, !dbg !77
  %100 = load float, ptr %99, align 4, !dbg !77, !tbaa !123
  %101 = fmul reassoc float %79, %100, !dbg !77
  %102 = getelementptr inbounds nuw float, ptr %T_multiply_intermediate, i64 %cse_v2.us, !dbg !77
  store float %101, ptr %102, align 4, !dbg !77, !tbaa !125
  %103 = add nuw nsw i64 %ax143.us, 1, !dbg !77
    #dbg_value(i64 %103, !122, !DIExpression(), !77)
  %exitcond55.not = icmp eq i64 %103, %s27, !dbg !77
  br i1 %exitcond55.not, label %for_begin_ax1.for_end_ax1_crit_edge.us, label %for_body_ax1.us, !dbg !77, !prof !112, !llvm.loop !130

for_begin_ax1.for_end_ax1_crit_edge.us:           ; preds = %for_body_ax1.us, %vec.epilog.middle.block190, %middle.block175
  %104 = add nuw nsw i64 %ax02044.us, 1, !dbg !77
    #dbg_value(i64 %104, !88, !DIExpression(), !77)
  %exitcond56.not = icmp eq i64 %104, %s77, !dbg !77
  br i1 %exitcond56.not, label %iter.check196.preheader, label %iter.check160, !dbg !77, !prof !93

iter.check196.preheader:                          ; preds = %for_begin_ax1.for_end_ax1_crit_edge.us
  %min.iters.check194 = icmp ult i64 %s27, 4
  %min.iters.check197 = icmp ult i64 %s27, 32
  %n.mod.vf200 = and i64 %s27, 28
  %n.vec201 = and i64 %s27, 9223372036854775776
  %cmp.n214 = icmp eq i64 %s27, %n.vec201
  %min.epilog.iters.check218 = icmp eq i64 %n.mod.vf200, 0
  %n.vec221 = and i64 %s27, 9223372036854775804
  %cmp.n228 = icmp eq i64 %s27, %n.vec221
  br label %iter.check196, !dbg !77

for_body_i0:                                      ; preds = %for_body_i0.preheader230, %for_body_i0
  %i042 = phi i64 [ %109, %for_body_i0 ], [ %i042.ph, %for_body_i0.preheader230 ]
    #dbg_value(i64 %i042, !131, !DIExpression(), !77)
  %105 = getelementptr inbounds nuw float, ptr %lv_red, i64 %i042, !dbg !77
  %106 = load float, ptr %105, align 4, !dbg !77, !tbaa !108
  %107 = tail call reassoc float @llvm.sqrt.f32(float %106), !dbg !77
  %108 = fdiv reassoc float 1.000000e+00, %107, !dbg !77
  store float %108, ptr %105, align 4, !dbg !77, !tbaa !108
  %109 = add nuw nsw i64 %i042, 1, !dbg !77
    #dbg_value(i64 %109, !131, !DIExpression(), !77)
  %exitcond54.not = icmp eq i64 %109, %s77, !dbg !77
  br i1 %exitcond54.not, label %for_begin_ax1.preheader.lr.ph, label %for_body_i0, !dbg !77, !prof !112, !llvm.loop !132

iter.check196:                                    ; preds = %iter.check196.preheader, %for_begin_ax126.for_end_ax128_crit_edge.us
  %ax02546.us = phi i64 [ %142, %for_begin_ax126.for_end_ax128_crit_edge.us ], [ 0, %iter.check196.preheader ]
    #dbg_value(i64 %ax02546.us, !88, !DIExpression(), !77)
    #dbg_value(i64 0, !122, !DIExpression(), !77)
  %110 = mul nuw nsw i64 %ax02546.us, %s27
  br i1 %min.iters.check194, label %for_body_ax127.us.preheader, label %vector.main.loop.iter.check198, !dbg !77, !prof !94

vector.main.loop.iter.check198:                   ; preds = %iter.check196
  br i1 %min.iters.check197, label %vec.epilog.ph219, label %vector.body202, !dbg !77, !prof !94

vector.body202:                                   ; preds = %vector.main.loop.iter.check198, %vector.body202
  %index203 = phi i64 [ %index.next212, %vector.body202 ], [ 0, %vector.main.loop.iter.check198 ], !dbg !77
  %111 = add nuw nsw i64 %index203, %110, !dbg !77
  %112 = getelementptr inbounds nuw float, ptr %p_weight, i64 %index203, !dbg !77
  %113 = getelementptr inbounds nuw i8, ptr %112, i64 32, !dbg !77
  %114 = getelementptr inbounds nuw i8, ptr %112, i64 64, !dbg !77
  %115 = getelementptr inbounds nuw i8, ptr %112, i64 96, !dbg !77
  %wide.load204 = load <8 x float>, ptr %112, align 64, !dbg !77, !tbaa !133
  %wide.load205 = load <8 x float>, ptr %113, align 32, !dbg !77, !tbaa !133
  %wide.load206 = load <8 x float>, ptr %114, align 64, !dbg !77, !tbaa !133
  %wide.load207 = load <8 x float>, ptr %115, align 32, !dbg !77, !tbaa !133
  %116 = getelementptr inbounds nuw float, ptr %T_multiply_intermediate, i64 %111, !dbg !77
  %117 = getelementptr inbounds nuw i8, ptr %116, i64 32, !dbg !77
  %118 = getelementptr inbounds nuw i8, ptr %116, i64 64, !dbg !77
  %119 = getelementptr inbounds nuw i8, ptr %116, i64 96, !dbg !77
  %wide.load208 = load <8 x float>, ptr %116, align 4, !dbg !77, !tbaa !125
  %wide.load209 = load <8 x float>, ptr %117, align 4, !dbg !77, !tbaa !125
  %wide.load210 = load <8 x float>, ptr %118, align 4, !dbg !77, !tbaa !125
  %wide.load211 = load <8 x float>, ptr %119, align 4, !dbg !77, !tbaa !125
  %120 = fmul reassoc <8 x float> %wide.load204, %wide.load208, !dbg !77
  %121 = fmul reassoc <8 x float> %wide.load205, %wide.load209, !dbg !77
  %122 = fmul reassoc <8 x float> %wide.load206, %wide.load210, !dbg !77
  %123 = fmul reassoc <8 x float> %wide.load207, %wide.load211, !dbg !77
  %124 = getelementptr inbounds nuw float, ptr %T_multiply_intermediate_1, i64 %111, !dbg !77
  %125 = getelementptr inbounds nuw i8, ptr %124, i64 32, !dbg !77
  %126 = getelementptr inbounds nuw i8, ptr %124, i64 64, !dbg !77
  %127 = getelementptr inbounds nuw i8, ptr %124, i64 96, !dbg !77
  store <8 x float> %120, ptr %124, align 4, !dbg !77, !tbaa !135
  store <8 x float> %121, ptr %125, align 4, !dbg !77, !tbaa !135
  store <8 x float> %122, ptr %126, align 4, !dbg !77, !tbaa !135
  store <8 x float> %123, ptr %127, align 4, !dbg !77, !tbaa !135
  %index.next212 = add nuw i64 %index203, 32, !dbg !77
  %128 = icmp eq i64 %index.next212, %n.vec201, !dbg !77
  br i1 %128, label %middle.block213, label %vector.body202, !dbg !77, !prof !95, !llvm.loop !137

middle.block213:                                  ; preds = %vector.body202
  br i1 %cmp.n214, label %for_begin_ax126.for_end_ax128_crit_edge.us, label %vec.epilog.iter.check217, !dbg !77, !prof !101

vec.epilog.iter.check217:                         ; preds = %middle.block213
  br i1 %min.epilog.iters.check218, label %for_body_ax127.us.preheader, label %vec.epilog.ph219, !prof !102

vec.epilog.ph219:                                 ; preds = %vector.main.loop.iter.check198, %vec.epilog.iter.check217
  %vec.epilog.resume.val215 = phi i64 [ %n.vec201, %vec.epilog.iter.check217 ], [ 0, %vector.main.loop.iter.check198 ]
  br label %vec.epilog.vector.body222

vec.epilog.vector.body222:                        ; preds = %vec.epilog.vector.body222, %vec.epilog.ph219
  %index223 = phi i64 [ %vec.epilog.resume.val215, %vec.epilog.ph219 ], [ %index.next226, %vec.epilog.vector.body222 ], !dbg !77
  %129 = add nuw nsw i64 %index223, %110, !dbg !77
  %130 = getelementptr inbounds nuw float, ptr %p_weight, i64 %index223, !dbg !77
  %wide.load224 = load <4 x float>, ptr %130, align 16, !dbg !77, !tbaa !133
  %131 = getelementptr inbounds nuw float, ptr %T_multiply_intermediate, i64 %129, !dbg !77
  %wide.load225 = load <4 x float>, ptr %131, align 4, !dbg !77, !tbaa !125
  %132 = fmul reassoc <4 x float> %wide.load224, %wide.load225, !dbg !77
  %133 = getelementptr inbounds nuw float, ptr %T_multiply_intermediate_1, i64 %129, !dbg !77
  store <4 x float> %132, ptr %133, align 4, !dbg !77, !tbaa !135
  %index.next226 = add nuw i64 %index223, 4, !dbg !77
  %134 = icmp eq i64 %index.next226, %n.vec221, !dbg !77
  br i1 %134, label %vec.epilog.middle.block227, label %vec.epilog.vector.body222, !dbg !77, !prof !106, !llvm.loop !138

vec.epilog.middle.block227:                       ; preds = %vec.epilog.vector.body222
  br i1 %cmp.n228, label %for_begin_ax126.for_end_ax128_crit_edge.us, label %for_body_ax127.us.preheader, !dbg !77, !prof !105

for_body_ax127.us.preheader:                      ; preds = %iter.check196, %vec.epilog.iter.check217, %vec.epilog.middle.block227
  %ax13045.us.ph = phi i64 [ 0, %iter.check196 ], [ %n.vec201, %vec.epilog.iter.check217 ], [ %n.vec221, %vec.epilog.middle.block227 ]
  br label %for_body_ax127.us, !dbg !77

for_body_ax127.us:                                ; preds = %for_body_ax127.us.preheader, %for_body_ax127.us
  %ax13045.us = phi i64 [ %141, %for_body_ax127.us ], [ %ax13045.us.ph, %for_body_ax127.us.preheader ]
    #dbg_value(i64 %ax13045.us, !122, !DIExpression(), !77)
  %cse_v3.us = add nuw nsw i64 %ax13045.us, %110, !dbg !77
    #dbg_value(i64 %cse_v3.us, !139, !DIExpression(), !77)
  %135 = getelementptr inbounds nuw float, ptr %p_weight, i64 %ax13045.us, !dbg !77
  %136 = load float, ptr %135, align 4, !dbg !77, !tbaa !133
  %137 = getelementptr inbounds nuw float, ptr %T_multiply_intermediate, i64 %cse_v3.us, !dbg !77
  %138 = load float, ptr %137, align 4, !dbg !77, !tbaa !125
  %139 = fmul reassoc float %136, %138, !dbg !77
  %140 = getelementptr inbounds nuw float, ptr %T_multiply_intermediate_1, i64 %cse_v3.us, !dbg !77
  store float %139, ptr %140, align 4, !dbg !77, !tbaa !135
  %141 = add nuw nsw i64 %ax13045.us, 1, !dbg !77
    #dbg_value(i64 %141, !122, !DIExpression(), !77)
  %exitcond57.not = icmp eq i64 %141, %s27, !dbg !77
  br i1 %exitcond57.not, label %for_begin_ax126.for_end_ax128_crit_edge.us, label %for_body_ax127.us, !dbg !77, !prof !112, !llvm.loop !140

for_begin_ax126.for_end_ax128_crit_edge.us:       ; preds = %for_body_ax127.us, %vec.epilog.middle.block227, %middle.block213
  %142 = add nuw nsw i64 %ax02546.us, 1, !dbg !77
    #dbg_value(i64 %142, !88, !DIExpression(), !77)
  %exitcond58.not = icmp eq i64 %142, %s77, !dbg !77
  br i1 %exitcond58.not, label %for_end_ax023, label %iter.check196, !dbg !77, !prof !93

for_end_ax023:                                    ; preds = %for_begin_ax126.for_end_ax128_crit_edge.us, %for_begin_ax1.preheader.lr.ph, %if_end2
  %143 = load ptr, ptr @__TVMBackendFreeWorkspace, align 8, !dbg !77, !tbaa !78
  %144 = tail call i32 %143(i32 1, i32 %dev_id, ptr nonnull %T_multiply_intermediate), !dbg !77
  %.not = icmp eq i32 %144, 0, !dbg !77
  br i1 %.not, label %if_end32, label %common.ret, !dbg !77, !prof !17

if_end32:                                         ; preds = %for_end_ax023
  %145 = load ptr, ptr @__TVMBackendFreeWorkspace, align 8, !dbg !77, !tbaa !78
  %146 = tail call i32 %145(i32 1, i32 %dev_id, ptr nonnull %lv_red), !dbg !77
  %.not37 = icmp ne i32 %146, 0, !dbg !77
  %. = sext i1 %.not37 to i32, !dbg !77
  br label %common.ret, !dbg !77
}

; Function Attrs: mustprogress nocallback nocreateundeforpoison nofree nosync nounwind speculatable willreturn memory(none)
declare float @llvm.sqrt.f32(float) #4

; Function Attrs: nofree noinline norecurse nosync nounwind memory(argmem: readwrite, inaccessiblemem: write)
define internal fastcc void @power_compute_(i64 %s77, i64 %s27, ptr noalias readonly align 64 captures(none) %x, ptr noalias writeonly align 64 captures(none) %T_power) unnamed_addr #5 !dbg !141 {
entry:
    #dbg_value(i64 %s77, !145, !DIExpression(), !149)
    #dbg_value(i64 %s27, !146, !DIExpression(), !149)
    #dbg_value(ptr %x, !147, !DIExpression(), !149)
    #dbg_value(ptr %T_power, !148, !DIExpression(), !149)
    #dbg_value(!DIArgList(i64 %s77, i64 %s27), !150, !DIExpression(DW_OP_LLVM_arg, 0, DW_OP_LLVM_arg, 1, DW_OP_mul, DW_OP_stack_value), !149)
    #dbg_declare(ptr %x, !151, !DIExpression(), !149)
  call void @llvm.assume(i1 true) [ "align"(ptr %x, i64 64) ], !dbg !149
    #dbg_declare(ptr %T_power, !152, !DIExpression(), !149)
  call void @llvm.assume(i1 true) [ "align"(ptr %T_power, i64 64) ], !dbg !149
    #dbg_value(i64 0, !153, !DIExpression(), !149)
  %0 = icmp sgt i64 %s77, 0, !dbg !149
  %1 = icmp sgt i64 %s27, 0
  %or.cond = select i1 %0, i1 %1, i1 false, !dbg !149, !prof !154
  br i1 %or.cond, label %iter.check.preheader, label %for_end_ax0, !dbg !149, !prof !154

iter.check.preheader:                             ; preds = %entry
  %min.iters.check = icmp ult i64 %s27, 4
  %min.iters.check1 = icmp ult i64 %s27, 32
  %n.mod.vf = and i64 %s27, 28
  %n.vec = and i64 %s27, 9223372036854775776
  %cmp.n = icmp eq i64 %s27, %n.vec
  %min.epilog.iters.check = icmp eq i64 %n.mod.vf, 0
  %n.vec6 = and i64 %s27, 9223372036854775804
  %cmp.n10 = icmp eq i64 %s27, %n.vec6
  br label %iter.check, !dbg !149

iter.check:                                       ; preds = %iter.check.preheader, %for_begin_ax1.for_end_ax1_crit_edge.us
  %ax02.us = phi i64 [ %26, %for_begin_ax1.for_end_ax1_crit_edge.us ], [ 0, %iter.check.preheader ]
    #dbg_value(i64 %ax02.us, !153, !DIExpression(), !149)
    #dbg_value(i64 0, !155, !DIExpression(), !149)
  %2 = mul nuw nsw i64 %ax02.us, %s27
  br i1 %min.iters.check, label %for_body_ax1.us.preheader, label %vector.main.loop.iter.check, !dbg !149, !prof !94

vector.main.loop.iter.check:                      ; preds = %iter.check
  br i1 %min.iters.check1, label %vec.epilog.ph, label %vector.body, !dbg !149, !prof !94

vector.body:                                      ; preds = %vector.main.loop.iter.check, %vector.body
  %index = phi i64 [ %index.next, %vector.body ], [ 0, %vector.main.loop.iter.check ], !dbg !149
  %3 = add nuw nsw i64 %index, %2, !dbg !149
  %4 = getelementptr inbounds nuw float, ptr %x, i64 %3, !dbg !149
  %5 = getelementptr inbounds nuw i8, ptr %4, i64 32, !dbg !149
  %6 = getelementptr inbounds nuw i8, ptr %4, i64 64, !dbg !149
  %7 = getelementptr inbounds nuw i8, ptr %4, i64 96, !dbg !149
  %wide.load = load <8 x float>, ptr %4, align 4, !dbg !149, !tbaa !156
  %wide.load2 = load <8 x float>, ptr %5, align 4, !dbg !149, !tbaa !156
  %wide.load3 = load <8 x float>, ptr %6, align 4, !dbg !149, !tbaa !156
  %wide.load4 = load <8 x float>, ptr %7, align 4, !dbg !149, !tbaa !156
  %8 = fmul reassoc <8 x float> %wide.load, %wide.load, !dbg !149
  %9 = fmul reassoc <8 x float> %wide.load2, %wide.load2, !dbg !149
  %10 = fmul reassoc <8 x float> %wide.load3, %wide.load3, !dbg !149
  %11 = fmul reassoc <8 x float> %wide.load4, %wide.load4, !dbg !149
  %12 = getelementptr inbounds nuw float, ptr %T_power, i64 %3, !dbg !149
  %13 = getelementptr inbounds nuw i8, ptr %12, i64 32, !dbg !149
  %14 = getelementptr inbounds nuw i8, ptr %12, i64 64, !dbg !149
  %15 = getelementptr inbounds nuw i8, ptr %12, i64 96, !dbg !149
  store <8 x float> %8, ptr %12, align 4, !dbg !149, !tbaa !158
  store <8 x float> %9, ptr %13, align 4, !dbg !149, !tbaa !158
  store <8 x float> %10, ptr %14, align 4, !dbg !149, !tbaa !158
  store <8 x float> %11, ptr %15, align 4, !dbg !149, !tbaa !158
  %index.next = add nuw i64 %index, 32, !dbg !149
  %16 = icmp eq i64 %index.next, %n.vec, !dbg !149
  br i1 %16, label %middle.block, label %vector.body, !dbg !149, !prof !95, !llvm.loop !160

middle.block:                                     ; preds = %vector.body
  br i1 %cmp.n, label %for_begin_ax1.for_end_ax1_crit_edge.us, label %vec.epilog.iter.check, !dbg !149, !prof !101

vec.epilog.iter.check:                            ; preds = %middle.block
  br i1 %min.epilog.iters.check, label %for_body_ax1.us.preheader, label %vec.epilog.ph, !prof !102

vec.epilog.ph:                                    ; preds = %vector.main.loop.iter.check, %vec.epilog.iter.check
  %vec.epilog.resume.val = phi i64 [ %n.vec, %vec.epilog.iter.check ], [ 0, %vector.main.loop.iter.check ]
  br label %vec.epilog.vector.body

vec.epilog.vector.body:                           ; preds = %vec.epilog.vector.body, %vec.epilog.ph
  %index7 = phi i64 [ %vec.epilog.resume.val, %vec.epilog.ph ], [ %index.next9, %vec.epilog.vector.body ], !dbg !149
  %17 = add nuw nsw i64 %index7, %2, !dbg !149
  %18 = getelementptr inbounds nuw float, ptr %x, i64 %17, !dbg !149
  %wide.load8 = load <4 x float>, ptr %18, align 4, !dbg !149, !tbaa !156
  %19 = fmul reassoc <4 x float> %wide.load8, %wide.load8, !dbg !149
  %20 = getelementptr inbounds nuw float, ptr %T_power, i64 %17, !dbg !149
  store <4 x float> %19, ptr %20, align 4, !dbg !149, !tbaa !158
  %index.next9 = add nuw i64 %index7, 4, !dbg !149
  %21 = icmp eq i64 %index.next9, %n.vec6, !dbg !149
  br i1 %21, label %vec.epilog.middle.block, label %vec.epilog.vector.body, !dbg !149, !prof !106, !llvm.loop !161

vec.epilog.middle.block:                          ; preds = %vec.epilog.vector.body
  br i1 %cmp.n10, label %for_begin_ax1.for_end_ax1_crit_edge.us, label %for_body_ax1.us.preheader, !dbg !149, !prof !105

for_body_ax1.us.preheader:                        ; preds = %iter.check, %vec.epilog.iter.check, %vec.epilog.middle.block
  %ax11.us.ph = phi i64 [ 0, %iter.check ], [ %n.vec, %vec.epilog.iter.check ], [ %n.vec6, %vec.epilog.middle.block ]
  br label %for_body_ax1.us, !dbg !149

for_body_ax1.us:                                  ; preds = %for_body_ax1.us.preheader, %for_body_ax1.us
  %ax11.us = phi i64 [ %25, %for_body_ax1.us ], [ %ax11.us.ph, %for_body_ax1.us.preheader ]
    #dbg_value(i64 %ax11.us, !155, !DIExpression(), !149)
  %cse_v2.us = add nuw nsw i64 %ax11.us, %2, !dbg !149
    #dbg_value(i64 %cse_v2.us, !162, !DIExpression(), !149)
  %22 = getelementptr inbounds nuw float, ptr %x, i64 %cse_v2.us, !dbg !149
  %23 = load float, ptr %22, align 4, !dbg !149, !tbaa !156
  %square.us = fmul reassoc float %23, %23, !dbg !149
  %24 = getelementptr inbounds nuw float, ptr %T_power, i64 %cse_v2.us, !dbg !149
  store float %square.us, ptr %24, align 4, !dbg !149, !tbaa !158
  %25 = add nuw nsw i64 %ax11.us, 1, !dbg !149
    #dbg_value(i64 %25, !155, !DIExpression(), !149)
  %exitcond.not = icmp eq i64 %25, %s27, !dbg !149
  br i1 %exitcond.not, label %for_begin_ax1.for_end_ax1_crit_edge.us, label %for_body_ax1.us, !dbg !149, !prof !112, !llvm.loop !163

for_begin_ax1.for_end_ax1_crit_edge.us:           ; preds = %for_body_ax1.us, %vec.epilog.middle.block, %middle.block
  %26 = add nuw nsw i64 %ax02.us, 1, !dbg !149
    #dbg_value(i64 %26, !153, !DIExpression(), !149)
  %exitcond4.not = icmp eq i64 %26, %s77, !dbg !149
  br i1 %exitcond4.not, label %for_end_ax0, label %iter.check, !dbg !149, !prof !93

for_end_ax0:                                      ; preds = %for_begin_ax1.for_end_ax1_crit_edge.us, %entry
  ret void, !dbg !149
}

; Function Attrs: nofree nosync nounwind memory(none)
define weak dso_local half @__truncsfhf2(float %a0) local_unnamed_addr #6 section ".text.tvm.fp16.conv" {
b0:
  %v0 = bitcast float %a0 to i32
  %0 = tail call float @llvm.fabs.f32(float %a0)
  %v1 = bitcast float %0 to i32
  %v2 = add nsw i32 %v1, -947912704
  %v3 = add nsw i32 %v1, -1199570944
  %v4 = icmp ult i32 %v2, %v3
  br i1 %v4, label %b1, label %b5

b1:                                               ; preds = %b0
  %v5 = lshr i32 %v0, 13
  %v7 = add nsw i32 %v5, -114688
  %v8 = and i32 %v0, 8191
  %v9 = icmp samesign ugt i32 %v8, 4096
  br i1 %v9, label %b2, label %b3

b2:                                               ; preds = %b1
  %v10 = add nsw i32 %v5, -114687
  br label %b13

b3:                                               ; preds = %b1
  %v11 = icmp eq i32 %v8, 4096
  br i1 %v11, label %b4, label %b13

b4:                                               ; preds = %b3
  %v13 = and i32 %v5, 1
  %v14 = add nsw i32 %v7, %v13
  br label %b13

b5:                                               ; preds = %b0
  %v15 = icmp samesign ugt i32 %v1, 2139095040
  br i1 %v15, label %b6, label %b7

b6:                                               ; preds = %b5
  %v16 = lshr i32 %v0, 13
  %v17 = and i32 %v16, 511
  %v18 = or disjoint i32 %v17, 32256
  br label %b13

b7:                                               ; preds = %b5
  %v19 = icmp samesign ugt i32 %v1, 1199570943
  br i1 %v19, label %b13, label %b8

b8:                                               ; preds = %b7
  %v20 = icmp samesign ult i32 %v1, 754974720
  br i1 %v20, label %b13, label %b9

b9:                                               ; preds = %b8
  %v21 = lshr i32 %v1, 23
  %v22 = sub nsw i32 113, %v21
  %v23 = and i32 %v0, 8388607
  %v24 = or disjoint i32 %v23, 8388608
  %v25 = add nsw i32 %v21, -81
  %v26 = shl i32 %v24, %v25
  %v27 = icmp ne i32 %v26, 0
  %v28 = lshr i32 %v24, %v22
  %v29 = zext i1 %v27 to i32
  %v30 = lshr i32 %v28, 13
  %v31 = and i32 %v28, 8191
  %v32 = or i32 %v31, %v29
  %v33 = icmp samesign ugt i32 %v32, 4096
  br i1 %v33, label %b10, label %b11

b10:                                              ; preds = %b9
  %v34 = add nuw nsw i32 %v30, 1
  br label %b13

b11:                                              ; preds = %b9
  %v35 = icmp eq i32 %v32, 4096
  br i1 %v35, label %b12, label %b13

b12:                                              ; preds = %b11
  %v36 = and i32 %v30, 1
  %v37 = add nuw nsw i32 %v36, %v30
  br label %b13

b13:                                              ; preds = %b12, %b11, %b10, %b8, %b7, %b6, %b4, %b3, %b2
  %v38 = phi i32 [ %v18, %b6 ], [ %v10, %b2 ], [ %v14, %b4 ], [ %v7, %b3 ], [ 31744, %b7 ], [ 0, %b8 ], [ %v34, %b10 ], [ %v37, %b12 ], [ %v30, %b11 ]
  %v39 = lshr i32 %v0, 16
  %v40 = and i32 %v39, 32768
  %v41 = or i32 %v38, %v40
  %vlast = trunc i32 %v41 to i16
  %vres = bitcast i16 %vlast to half
  ret half %vres
}

; Function Attrs: nofree nosync nounwind memory(none)
define weak dso_local float @__extendhfsf2(half %a0) local_unnamed_addr #6 section ".text.tvm.fp16.conv" {
b0:
  %0 = tail call half @llvm.fabs.f16(half %a0)
  %v1 = bitcast half %0 to i16
  %v2 = zext nneg i16 %v1 to i32
  %v3 = add nsw i16 %v1, -1024
  %v4 = icmp ult i16 %v3, 30720
  br i1 %v4, label %b1, label %b2

b1:                                               ; preds = %b0
  %v5 = shl nuw nsw i32 %v2, 13
  %v6 = add nuw nsw i32 %v5, 939524096
  br label %b6

b2:                                               ; preds = %b0
  %v7 = icmp samesign ugt i16 %v1, 31743
  br i1 %v7, label %b3, label %b4

b3:                                               ; preds = %b2
  %v8 = shl nuw nsw i32 %v2, 13
  %v9 = or i32 %v8, 2139095040
  br label %b6

b4:                                               ; preds = %b2
  %v10 = icmp eq i16 %v1, 0
  br i1 %v10, label %b6, label %b5

b5:                                               ; preds = %b4
  %v11 = icmp samesign ult i16 %v1, 256
  %v12 = lshr i32 %v2, 8
  %v13 = select i1 %v11, i32 %v2, i32 %v12
  %v14 = select i1 %v11, i32 32, i32 24
  %v15 = icmp samesign ult i32 %v13, 16
  %v16 = lshr i32 %v13, 4
  %v17 = add nsw i32 %v14, -4
  %v18 = select i1 %v15, i32 %v13, i32 %v16
  %v19 = select i1 %v15, i32 %v14, i32 %v17
  %v20 = icmp samesign ult i32 %v18, 4
  %v21 = lshr i32 %v18, 2
  %v22 = add nsw i32 %v19, -2
  %v23 = select i1 %v20, i32 %v18, i32 %v21
  %v24 = select i1 %v20, i32 %v19, i32 %v22
  %v25 = icmp samesign ult i32 %v23, 2
  %v26 = sub nsw i32 0, %v23
  %v27 = select i1 %v25, i32 %v26, i32 -2
  %v28 = add nsw i32 %v27, %v24
  %v29 = add nsw i32 %v28, -8
  %v30 = shl i32 %v2, %v29
  %v31 = xor i32 %v30, 8388608
  %v32 = shl i32 %v28, 23
  %v33 = sub i32 1124073472, %v32
  %v34 = or i32 %v31, %v33
  br label %b6

b6:                                               ; preds = %b5, %b4, %b3, %b1
  %v35 = phi i32 [ %v6, %b1 ], [ %v9, %b3 ], [ %v34, %b5 ], [ 0, %b4 ]
  %vinp = bitcast half %a0 to i16
  %v36 = and i16 %vinp, -32768
  %v37 = zext i16 %v36 to i32
  %v38 = shl nuw i32 %v37, 16
  %v39 = or i32 %v35, %v38
  %v40 = bitcast i32 %v39 to float
  ret float %v40
}

; Function Attrs: nocallback nocreateundeforpoison nofree nosync nounwind speculatable willreturn memory(none)
declare float @llvm.fabs.f32(float) #7

; Function Attrs: nocallback nocreateundeforpoison nofree nosync nounwind speculatable willreturn memory(none)
declare half @llvm.fabs.f16(half) #7

; Function Attrs: nocallback nofree nounwind willreturn memory(argmem: write)
declare void @llvm.memset.p0.i64(ptr writeonly captures(none), i8, i64, i1 immarg) #8

; Function Attrs: nocallback nofree nosync nounwind speculatable willreturn memory(none)
declare float @llvm.vector.reduce.fadd.v8f32(float, <8 x float>) #9

; Function Attrs: nocallback nofree nosync nounwind speculatable willreturn memory(none)
declare float @llvm.vector.reduce.fadd.v4f32(float, <4 x float>) #9

; Function Attrs: nocallback nocreateundeforpoison nofree nosync nounwind speculatable willreturn memory(none)
declare <8 x float> @llvm.sqrt.v8f32(<8 x float>) #7

attributes #0 = { "target-cpu"="x86-64" }
attributes #1 = { noinline }
attributes #2 = { mustprogress nocallback nofree nosync nounwind willreturn memory(inaccessiblemem: write) }
attributes #3 = { noinline }
attributes #4 = { mustprogress nocallback nocreateundeforpoison nofree nosync nounwind speculatable willreturn memory(none) }
attributes #5 = { nofree noinline norecurse nosync nounwind memory(argmem: readwrite, inaccessiblemem: write) }
attributes #6 = { nofree nosync nounwind memory(none) "target-features" }
attributes #7 = { nocallback nocreateundeforpoison nofree nosync nounwind speculatable willreturn memory(none) }
attributes #8 = { nocallback nofree nounwind willreturn memory(argmem: write) }
attributes #9 = { nocallback nofree nosync nounwind speculatable willreturn memory(none) }

!llvm.dbg.cu = !{!0}
!llvm.module.flags = !{!2, !3, !4}

!0 = distinct !DICompileUnit(language: DW_LANG_C, file: !1, producer: "TVM", isOptimized: false, runtimeVersion: 0, emissionKind: FullDebug)
!1 = !DIFile(filename: "IRModule.CodeGenLLVM", directory: ".")
!2 = !{i32 2, !"tvm_target", !"{\22kind\22:\22llvm\22,\22mtriple\22:\22x86_64-conda-linux-gnu\22,\22fast-math-reassoc\22:true}"}
!3 = !{i32 4, !"Debug Info Version", i32 3}
!4 = !{i32 4, !"Dwarf Version", i32 4}
!5 = distinct !DISubprogram(name: "__tvm_ffi_fused_mean_add_tir_rsqrt_multiply_multiply1", scope: !1, file: !1, type: !6, flags: DIFlagPrototyped, spFlags: DISPFlagLocalToUnit | DISPFlagDefinition | DISPFlagOptimized, unit: !0, retainedNodes: !10)
!6 = !DISubroutineType(types: !7)
!7 = !{!8, !9, !9, !8, !9}
!8 = !DIBasicType(name: "int32", size: 32, encoding: DW_ATE_signed)
!9 = !DIDerivedType(tag: DW_TAG_pointer_type, baseType: null)
!10 = !{!11, !12, !13, !14}
!11 = !DILocalVariable(name: "self_handle", arg: 1, scope: !5, file: !1, type: !9)
!12 = !DILocalVariable(name: "args", arg: 2, scope: !5, file: !1, type: !9)
!13 = !DILocalVariable(name: "num_args", arg: 3, scope: !5, file: !1, type: !8)
!14 = !DILocalVariable(name: "result", arg: 4, scope: !5, file: !1, type: !9)
!15 = !DILocation(line: 0, scope: !5)
!16 = !{!"branch_weights", i32 1048576, i32 1}
!17 = !{!"branch_weights", i32 1, i32 1048576}
!18 = !DILocalVariable(name: "lv.type_index", scope: !5, file: !1, type: !8)
!19 = !{!"branch_weights", i32 1, i32 349525, i32 349525, i32 349525}
!20 = !DILocalVariable(name: "lv.handle", scope: !5, file: !1, type: !9)
!21 = !DILocalVariable(name: "x.type_index", scope: !5, file: !1, type: !8)
!22 = !DILocalVariable(name: "x.handle", scope: !5, file: !1, type: !9)
!23 = !DILocalVariable(name: "p_weight.type_index", scope: !5, file: !1, type: !8)
!24 = !DILocalVariable(name: "p_weight.handle", scope: !5, file: !1, type: !9)
!25 = !DILocalVariable(name: "T_multiply_intermediate_1.type_index", scope: !5, file: !1, type: !8)
!26 = !DILocalVariable(name: "T_multiply_intermediate_1.handle", scope: !5, file: !1, type: !9)
!27 = !DILocalVariable(name: "fused_mean_add_tir_rsqrt_multiply_multiply1.lv_shape", scope: !5, file: !1, type: !28)
!28 = !DIDerivedType(tag: DW_TAG_pointer_type, baseType: !29)
!29 = !DIBasicType(name: "int64", size: 64, encoding: DW_ATE_signed)
!30 = !DILocalVariable(name: "s77", scope: !5, file: !1, type: !29)
!31 = !DILocalVariable(name: "s27", scope: !5, file: !1, type: !29)
!32 = !DILocalVariable(name: "fused_mean_add_tir_rsqrt_multiply_multiply1.lv_strides", scope: !5, file: !1, type: !28)
!33 = !DILocalVariable(name: "dev_id", scope: !5, file: !1, type: !8)
!34 = !DILocalVariable(name: "fused_mean_add_tir_rsqrt_multiply_multiply1.x_shape", scope: !5, file: !1, type: !28)
!35 = !DILocalVariable(name: "fused_mean_add_tir_rsqrt_multiply_multiply1.x_strides", scope: !5, file: !1, type: !28)
!36 = !DILocalVariable(name: "fused_mean_add_tir_rsqrt_multiply_multiply1.p_weight_shape", scope: !5, file: !1, type: !28)
!37 = !DILocalVariable(name: "fused_mean_add_tir_rsqrt_multiply_multiply1.p_weight_strides", scope: !5, file: !1, type: !28)
!38 = !DILocalVariable(name: "fused_mean_add_tir_rsqrt_multiply_multiply1.T_multiply_intermediate_1_shape", scope: !5, file: !1, type: !28)
!39 = !DILocalVariable(name: "fused_mean_add_tir_rsqrt_multiply_multiply1.T_multiply_intermediate_1_strides", scope: !5, file: !1, type: !28)
!40 = !DILocalVariable(name: "lv", scope: !5, file: !1, type: !41)
!41 = !DIDerivedType(tag: DW_TAG_pointer_type, baseType: !42)
!42 = !DIBasicType(name: "float32", size: 32, encoding: DW_ATE_float)
!43 = !DILocalVariable(name: "x", scope: !5, file: !1, type: !41)
!44 = !DILocalVariable(name: "p_weight", scope: !5, file: !1, type: !41)
!45 = !DILocalVariable(name: "T_multiply_intermediate_1", scope: !5, file: !1, type: !41)
!46 = distinct !DISubprogram(name: "__tvm_ffi_power", scope: !1, file: !1, type: !6, flags: DIFlagPrototyped, spFlags: DISPFlagLocalToUnit | DISPFlagDefinition | DISPFlagOptimized, unit: !0, retainedNodes: !47)
!47 = !{!48, !49, !50, !51}
!48 = !DILocalVariable(name: "self_handle", arg: 1, scope: !46, file: !1, type: !9)
!49 = !DILocalVariable(name: "args", arg: 2, scope: !46, file: !1, type: !9)
!50 = !DILocalVariable(name: "num_args", arg: 3, scope: !46, file: !1, type: !8)
!51 = !DILocalVariable(name: "result", arg: 4, scope: !46, file: !1, type: !9)
!52 = !DILocation(line: 0, scope: !46)
!53 = !DILocalVariable(name: "x.type_index", scope: !46, file: !1, type: !8)
!54 = !DILocalVariable(name: "x.handle", scope: !46, file: !1, type: !9)
!55 = !DILocalVariable(name: "T_power.type_index", scope: !46, file: !1, type: !8)
!56 = !DILocalVariable(name: "T_power.handle", scope: !46, file: !1, type: !9)
!57 = !DILocalVariable(name: "power.x_shape", scope: !46, file: !1, type: !28)
!58 = !DILocalVariable(name: "s77", scope: !46, file: !1, type: !29)
!59 = !DILocalVariable(name: "s27", scope: !46, file: !1, type: !29)
!60 = !DILocalVariable(name: "power.x_strides", scope: !46, file: !1, type: !28)
!61 = !DILocalVariable(name: "dev_id", scope: !46, file: !1, type: !8)
!62 = !DILocalVariable(name: "power.T_power_shape", scope: !46, file: !1, type: !28)
!63 = !DILocalVariable(name: "power.T_power_strides", scope: !46, file: !1, type: !28)
!64 = !DILocalVariable(name: "x", scope: !46, file: !1, type: !41)
!65 = !DILocalVariable(name: "T_power", scope: !46, file: !1, type: !41)
!66 = distinct !DISubprogram(name: "fused_mean_add_tir_rsqrt_multiply_multiply1_compute_", scope: !1, file: !1, type: !67, flags: DIFlagPrototyped, spFlags: DISPFlagLocalToUnit | DISPFlagDefinition | DISPFlagOptimized, unit: !0, retainedNodes: !69)
!67 = !DISubroutineType(types: !68)
!68 = !{!8, !8, !29, !29, !41, !41, !41, !41}
!69 = !{!70, !71, !72, !73, !74, !75, !76}
!70 = !DILocalVariable(name: "dev_id", arg: 1, scope: !66, file: !1, type: !8)
!71 = !DILocalVariable(name: "s77", arg: 2, scope: !66, file: !1, type: !29)
!72 = !DILocalVariable(name: "s27", arg: 3, scope: !66, file: !1, type: !29)
!73 = !DILocalVariable(name: "lv", arg: 4, scope: !66, file: !1, type: !41)
!74 = !DILocalVariable(name: "x", arg: 5, scope: !66, file: !1, type: !41)
!75 = !DILocalVariable(name: "p_weight", arg: 6, scope: !66, file: !1, type: !41)
!76 = !DILocalVariable(name: "T_multiply_intermediate_1", arg: 7, scope: !66, file: !1, type: !41)
!77 = !DILocation(line: 0, scope: !66)
!78 = !{!79, !79, i64 0}
!79 = !{!"ctx_ptr", !80, i64 0}
!80 = !{!"tvm-tbaa"}
!81 = !DILocalVariable(name: "lv_red", scope: !66, file: !1, type: !41)
!82 = !DILocalVariable(name: "cse_v1", scope: !66, file: !1, type: !29)
!83 = !DILocalVariable(name: "T_multiply_intermediate", scope: !66, file: !1, type: !41)
!84 = !DILocalVariable(name: "lv", scope: !66, file: !1, type: !41)
!85 = !DILocalVariable(name: "x", scope: !66, file: !1, type: !41)
!86 = !DILocalVariable(name: "p_weight", scope: !66, file: !1, type: !41)
!87 = !DILocalVariable(name: "T_multiply_intermediate_1", scope: !66, file: !1, type: !41)
!88 = !DILocalVariable(name: "ax0", scope: !66, file: !1, type: !29)
!89 = !{!"branch_weights", i32 127, i32 1}
!90 = !DILocalVariable(name: "k1", scope: !66, file: !1, type: !29)
!91 = !{!92, !92, i64 0}
!92 = !{!"0x560ac283aac0", !80, i64 0}
!93 = !{!"branch_weights", i32 127, i32 134217601}
!94 = !{!"branch_weights", i32 1, i32 127}
!95 = !{!"branch_weights", i32 127, i32 4194175}
!96 = distinct !{!96, !97, !98, !99, !100}
!97 = !{!"llvm.loop.peeled.count", i32 1}
!98 = !{!"llvm.loop.isvectorized", i32 1}
!99 = !{!"llvm.loop.unroll.runtime.disable"}
!100 = !{!"llvm.loop.estimated_trip_count", i32 33026}
!101 = !{!"branch_weights", i32 1, i32 31}
!102 = !{!"branch_weights", i32 4, i32 28}
!103 = distinct !{!103, !97, !98, !104, !99}
!104 = !{!"llvm.loop.estimated_trip_count", i32 0}
!105 = !{!"branch_weights", i32 1, i32 3}
!106 = !{!"branch_weights", i32 1, i32 0}
!107 = distinct !{!107, !97, !99, !98, !104}
!108 = !{!109, !109, i64 0}
!109 = !{!"0x560ac26fca50", !80, i64 0}
!110 = distinct !{!110, !98, !99, !100}
!111 = distinct !{!111, !98, !99, !104}
!112 = !{!"branch_weights", i32 127, i32 0}
!113 = distinct !{!113, !99, !98, !114}
!114 = !{!"llvm.loop.estimated_trip_count", i32 1}
!115 = distinct !{!115, !98, !99, !100}
!116 = distinct !{!116, !98, !99, !104}
!117 = distinct !{!117, !99, !98, !114}
!118 = !{!"branch_weights", i32 127, i32 16777081}
!119 = distinct !{!119, !98, !99, !120}
!120 = !{!"llvm.loop.estimated_trip_count", i32 132104}
!121 = !{!"branch_weights", i32 1, i32 7}
!122 = !DILocalVariable(name: "ax1", scope: !66, file: !1, type: !29)
!123 = !{!124, !124, i64 0}
!124 = !{!"0x560ac283a740", !80, i64 0}
!125 = !{!126, !126, i64 0}
!126 = !{!"0x560ac2947430", !80, i64 0}
!127 = distinct !{!127, !98, !99, !100}
!128 = distinct !{!128, !98, !99, !104}
!129 = !DILocalVariable(name: "cse_v2", scope: !66, file: !1, type: !29)
!130 = distinct !{!130, !99, !98, !114}
!131 = !DILocalVariable(name: "i0", scope: !66, file: !1, type: !29)
!132 = distinct !{!132, !99, !98, !114}
!133 = !{!134, !134, i64 0}
!134 = !{!"0x560ac283ae40", !80, i64 0}
!135 = !{!136, !136, i64 0}
!136 = !{!"0x560ac283a500", !80, i64 0}
!137 = distinct !{!137, !98, !99, !100}
!138 = distinct !{!138, !98, !99, !104}
!139 = !DILocalVariable(name: "cse_v3", scope: !66, file: !1, type: !29)
!140 = distinct !{!140, !99, !98, !114}
!141 = distinct !DISubprogram(name: "power_compute_", scope: !1, file: !1, type: !142, flags: DIFlagPrototyped, spFlags: DISPFlagLocalToUnit | DISPFlagDefinition | DISPFlagOptimized, unit: !0, retainedNodes: !144)
!142 = !DISubroutineType(cc: DW_CC_nocall, types: !143)
!143 = !{!8, !29, !29, !41, !41}
!144 = !{!145, !146, !147, !148}
!145 = !DILocalVariable(name: "s77", arg: 1, scope: !141, file: !1, type: !29)
!146 = !DILocalVariable(name: "s27", arg: 2, scope: !141, file: !1, type: !29)
!147 = !DILocalVariable(name: "x", arg: 3, scope: !141, file: !1, type: !41)
!148 = !DILocalVariable(name: "T_power", arg: 4, scope: !141, file: !1, type: !41)
!149 = !DILocation(line: 0, scope: !141)
!150 = !DILocalVariable(name: "cse_v1", scope: !141, file: !1, type: !29)
!151 = !DILocalVariable(name: "x", scope: !141, file: !1, type: !41)
!152 = !DILocalVariable(name: "T_power", scope: !141, file: !1, type: !41)
!153 = !DILocalVariable(name: "ax0", scope: !141, file: !1, type: !29)
!154 = !{!"branch_weights", i32 16129, i32 255}
!155 = !DILocalVariable(name: "ax1", scope: !141, file: !1, type: !29)
!156 = !{!157, !157, i64 0}
!157 = !{!"0x560ac2917750", !80, i64 0}
!158 = !{!159, !159, i64 0}
!159 = !{!"0x560ac25cc8d0", !80, i64 0}
!160 = distinct !{!160, !98, !99, !100}
!161 = distinct !{!161, !98, !99, !104}
!162 = !DILocalVariable(name: "cse_v2", scope: !141, file: !1, type: !29)
!163 = distinct !{!163, !99, !98, !114}
