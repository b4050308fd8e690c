import { normalizeText } from "../core/text";

/**
 * A small Chinese–English glossary of the words data agents' users talk in
 * (infrastructure, data work, reporting, planning, medicine), for semantic and
 * hybrid search without an LLM: a query's terms bring their equivalents in the
 * other language and their common abbreviations, so "数据库配置" also looks for
 * "database config" and "DB". Keyword search stays literal. Each line is one
 * group of interchangeable terms.
 */
const GROUPS = `
数据库|database|db
配置|config|configuration|设置|settings
参数|parameter|parameters|params
生产环境|生产|线上|production|prod
预发|预发布|staging|pre-release|stage
测试环境|test environment|testing
开发环境|本地|local|development|dev
缓存|cache|caching
内存|memory|ram
淘汰策略|eviction|eviction policy
过期时间|ttl|expiry|expiration
连接池|connection pool|pool
连接|connection|connect
主机|host|hostname
端口|port
地址|address|endpoint|url
密码|password|credential|credentials|凭据
密钥|key|api key|secret|秘钥
权限|permission|permissions|access|授权
账号|account|用户名|username
部署|deploy|deployment|上线
发版|发布|release|版本发布
回滚|回退|rollback|roll back|revert
版本|version
实例|instance|instances|replica|replicas|副本
扩容|autoscale|autoscaling|scale|scaling|伸缩
服务器|server|机器|machine
服务|service
集群|cluster
容器|container|docker
镜像|image
日志|log|logs|logging
监控|monitoring|monitor|告警|alert|alerting
故障|事故|incident|outage|故障处理
值班|on-call|oncall
升级|escalate|escalation
重启|restart|crash|崩溃
超时|timeout|timed out
错误|error|errors|报错|exception
备份|backup|backups
恢复|restore|recovery
保留|retention|retain
迁移|migration|migrate
索引|index|indexes
查询|query|queries|sql
慢查询|slow query|slow sql
数据表|table|tables
字段|field|column|列
数据源|data source|source
同步|sync|refresh|刷新|更新
数据质量|data quality|质量
缺失|missing|empty|缺失值|空值
重复|duplicate|duplicates|去重|dedup
清洗|cleaning|clean
报表|report|reports|报告
周报|weekly report|weekly
月报|monthly report|monthly
图表|chart|charts
折线图|line chart|趋势图
饼图|pie chart
柱状图|bar chart
颜色|colour|color|colours|colors|配色
时区|timezone|time zone
格式|format|formatting
货币|currency|金额|amount|money
语言|language
偏好|preference|preferences|喜欢|习惯
会议|meeting|周会|例会
截止日期|deadline|截止|due|到期
目标|target|goal|goals
指标|metric|metrics|kpi|kpis
定义|definition|define
负责人|owner|owns|负责|responsible
审核|review|把关|审批|approve|approval
方案|plan|proposal|approach|solution|设计
决定|decision|decided|决策
检索|retrieval|search|搜索
向量|vector|embedding|embeddings
模型|model|models
大模型|llm|language model
知识网络|knowledge network|知识图谱|knowledge graph
上线日期|launch date|go-live
封版|code freeze|freeze|冻结
销售|sales|销量|revenue|营收|收入
用户|user|users
活跃|active
医生|doctor|doctors|physician
医院|hospital|hospitals
科室|department|departments
疾病|disease|diseases
症状|symptom|symptoms
药品|药物|drug|drugs|medicine|medication
药厂|药企|制药|manufacturer|pharma|company|企业
批准文号|approval number|approval numbers
召回|recall|recalled
相互作用|interaction|interactions|一起吃|同服|合用
并发症|complication|complications
糖尿病|diabetes
高血压|hypertension
二甲双胍|metformin
华法林|warfarin
阿司匹林|aspirin
缬沙坦|valsartan
地图|map|maps
文档|document|docs|documentation
代码|code
风格|style
`;

const groups: string[][] = GROUPS.trim()
  .split("\n")
  .map((line) => line.split("|").map((t) => t.toLowerCase()));

/** Each term with its group and how it is found: Latin terms as whole words, Chinese ones anywhere. */
const terms = groups.flatMap((group, index) =>
  group.map((text) => {
    const word = new RegExp(`(?<![a-z0-9])${escapeRegExp(text)}(?![a-z0-9])`);
    return {
      group: index,
      matches: /^[\x20-\x7e]+$/.test(text)
        ? (lower: string) => word.test(lower)
        : (lower: string) => lower.includes(text),
    };
  }),
);

/**
 * The glossary equivalents of the terms in `text` that the text does not
 * already contain, in group order. Latin terms match whole words; Chinese
 * terms match anywhere (Chinese has no spaces to bound them).
 */
export function equivalentsOf(text: string): string[] {
  const lower = normalizeText(text);
  const found = new Set<number>();
  for (const t of terms) {
    if (found.has(t.group)) continue;
    if (t.matches(lower)) found.add(t.group);
  }
  const out: string[] = [];
  for (const g of [...found].sort((a, b) => a - b)) for (const t of groups[g]!) if (!lower.includes(t)) out.push(t);
  return out;
}

function escapeRegExp(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\-]/g, "\\$&");
}
